/**
 * bench:scale-out — matching with 1 thread against 2 (or SCALE_THREADS) threads on the same work:
 * N identities as the baseline (sent to the threads as shared columns while the owner prepares its
 * own copy), then SCALE_ACCOUNTS new accounts (default: all N for the main configuration, 2,000 for
 * the one without a mandatory attribute, which scores ~45x more pairs per account) in batches of
 * 250, each batch joining the baseline after its match(), as the aggregation calls it. Sizes 10k and
 * 100k (SCALE_SIZES overrides); runs alternate 1 and 2 threads, SCALE_REPEATS times (median).
 *
 * Goal (printed beside each figure; exit 1 on a miss): speed-up of the whole (baseline load +
 * matching) >= 0.7 x the threads in use, at 100k. Threads in use: min(SCALE_THREADS, cores).
 * The results of both runs are compared and must be identical. Memory per thread: the heap a thread
 * holds once it has the baseline: the owner's heap growth with one thread (GC forced before each
 * reading), since a thread prepares the same values and indexes (without the model's state).
 * "Cores obtained": the process's CPU time over the wall time of each run; on a machine other
 * processes load, a low figure for the threaded run explains a low speed-up.
 *
 * Break-even (SCALE_BREAK_EVEN=1): the same at 2k, 5k, 10k, 20k and 50k, to place
 * DEFAULT_MIN_RECORDS (src/core/matching/parallel/parallelism.ts).
 *
 * SCALE_MODE (comma-separated; default all three): threads (the above), queue (one 300k matching
 * over 1, 2 and 3 worker processes through BullMQ child jobs: scale-out-queue.ts), aggregation (one
 * whole 300k std:account:list against the simulator over 1, 2 and 3 worker processes:
 * scale-out-aggregation.ts).
 */
import { availableParallelism } from 'node:os';
import { type MatchResult, type MatchingSettings, buildMatcher } from '../src/core/matching';
import { type AsyncMatcher, inThread } from '../src/core/matching/parallel/async-matcher';
import { buildRunMatcher } from '../src/core/matching/parallel/parallelism';
import { columnBytes, encodeRecords } from '../src/core/matching/parallel/record-columns';
import { MAIN_SETTINGS, NO_MANDATORY_SETTINGS, generate } from './matching-data';
import { generatorDigest, resultDigest } from './result-digest';
import { aggregationScaleOut } from './scale-out-aggregation';
import { queueScaleOut } from './scale-out-queue';

const SEED = Number(process.env.MATCH_SEED ?? 20261120);
const BATCH = 250;
const THREADS = Number(process.env.SCALE_THREADS ?? 2);
const REPEATS = Number(process.env.SCALE_REPEATS ?? 3);
const BREAK_EVEN = process.env.SCALE_BREAK_EVEN === '1';
const SIZES = process.env.SCALE_SIZES
  ? process.env.SCALE_SIZES.split(',').map(Number)
  : BREAK_EVEN
    ? [2_000, 5_000, 10_000, 20_000, 50_000]
    : [10_000, 100_000];
const GOAL_SIZE = 100_000;
const MODES = (process.env.SCALE_MODE ?? 'threads,queue,aggregation').split(',');

const CONFIGS: { label: string; settings: MatchingSettings; accounts: number }[] = [
  {
    label: 'main',
    accounts: Infinity,
    settings: MAIN_SETTINGS,
  },
  {
    label: 'no-mandatory',
    accounts: 2_000,
    settings: NO_MANDATORY_SETTINGS,
  },
];

const fmt = (x: number, d = 1): string => x.toLocaleString('en-US', { maximumFractionDigits: d });
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
/** Heap of this thread after a GC: with one thread, what a prepared baseline costs (each extra thread holds one). */
const heapMb = (): number => {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Run {
  loadS: number;
  matchS: number;
  /** CPU time of the process (every thread) over the wall time: the cores the machine actually gave. */
  cores: number;
  /** Heap the baseline added to the owner thread, MiB. */
  baselineMb: number;
  digest: string;
  /** generatorDigest of the same results: reported when it differs, not required. */
  generators: string;
}

async function timed(
  threads: number,
  settings: MatchingSettings,
  data: ReturnType<typeof generate>,
  accounts: number,
): Promise<Run> {
  const before = heapMb();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const m: AsyncMatcher =
    threads === 1 ? inThread(buildMatcher(settings)) : buildRunMatcher(settings, {}, { threads, minRecords: 0 });
  try {
    for (let i = 0; i < data.identities.length; i += 1000) m.addBaseline(data.identities.slice(i, i + 1000));
    const results: MatchResult[] = [];
    // The first batch waits for the threads to hold the baseline: it belongs to the load.
    const first = data.accounts.slice(0, BATCH);
    results.push(await m.match(first, { topK: Infinity }));
    m.addBaseline(first);
    const loadS = (performance.now() - t0) / 1000;
    const baselineMb = heapMb() - before;
    const t1 = performance.now();
    const n = Math.min(accounts, data.accounts.length);
    for (let i = BATCH; i < n; i += BATCH) {
      const batch = data.accounts.slice(i, Math.min(n, i + BATCH));
      results.push(await m.match(batch, { topK: Infinity }));
      m.addBaseline(batch);
    }
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const cores = (cpu.user + cpu.system) / 1000 / wallMs;
    return {
      loadS,
      matchS: (performance.now() - t1) / 1000,
      cores,
      baselineMb,
      digest: resultDigest(results),
      generators: generatorDigest(results),
    };
  } finally {
    await m.close();
  }
}

async function main(): Promise<number> {
  const unknown = MODES.filter((m) => !['threads', 'queue', 'aggregation'].includes(m));
  if (unknown.length) throw new Error(`SCALE_MODE: unknown mode ${unknown.join()} (threads, queue, aggregation)`);
  const misses: string[] = [];
  if (MODES.includes('threads')) misses.push(...(await threadScaleOut()));
  if (MODES.includes('queue')) misses.push(...(await queueScaleOut()));
  if (MODES.includes('aggregation')) misses.push(...(await aggregationScaleOut()));
  for (const m of misses) process.stdout.write(`MISSED: ${m}\n`);
  return misses.length ? 1 : 0;
}

async function threadScaleOut(): Promise<string[]> {
  const cores = availableParallelism();
  const inUse = Math.min(THREADS, cores);
  process.stdout.write(
    `bench:scale-out (seed ${SEED}; 1 vs ${THREADS} threads, ${cores} cores available; median of ${REPEATS}; node ${process.version})\n`,
  );
  const misses: string[] = [];
  for (const n of SIZES) {
    const data = generate(SEED, n, n);
    for (const { label, settings, accounts } of CONFIGS) {
      const one: Run[] = [];
      const many: Run[] = [];
      const repeats = n >= GOAL_SIZE ? 1 : REPEATS;
      for (let r = 0; r < repeats; r++) {
        one.push(await timed(1, settings, data, accounts));
        many.push(await timed(THREADS, settings, data, accounts));
      }
      if (many.some((x) => x.digest !== one[0]!.digest))
        misses.push(`${label} ${n}: results differ between 1 and ${THREADS} threads`);
      if (many.some((x) => x.generators !== one[0]!.generators))
        process.stdout.write(
          `  (${label} ${fmt(n, 0)}: the index chosen per account differs between 1 and ${THREADS} threads, the candidates do not)\n`,
        );
      const total = (rs: Run[]): number => median(rs.map((x) => x.loadS + x.matchS));
      const speedup = total(one) / total(many);
      const matchSpeedup = median(one.map((x) => x.matchS)) / median(many.map((x) => x.matchS));
      const perThreadMb = median(one.map((x) => x.baselineMb));
      const want = 0.7 * inUse;
      const matched = Math.min(accounts, n);
      let key = 0;
      const shared = columnBytes(encodeRecords(data.identities, settings.attributes, () => key++)) / n;
      process.stdout.write(
        `  ${fmt(n, 0)} x ${fmt(matched, 0)} ${label.padEnd(13)} 1 thread ${fmt(total(one), 2)} s (load ${fmt(median(one.map((x) => x.loadS)), 2)} s), ` +
          `${THREADS} threads ${fmt(total(many), 2)} s (load ${fmt(median(many.map((x) => x.loadS)), 2)} s): ` +
          `speed-up ${fmt(speedup, 2)} (matching alone ${fmt(matchSpeedup, 2)}); cores obtained ${fmt(median(one.map((x) => x.cores)), 2)} / ${fmt(median(many.map((x) => x.cores)), 2)}; memory per thread ${fmt(perThreadMb, 0)} MiB, shared columns ${fmt(shared, 0)} bytes per record` +
          (n === GOAL_SIZE
            ? `   goal >= ${fmt(want, 2)} (0.7 x ${inUse} cores in use): ${speedup >= want ? 'ok' : 'MISSED'}`
            : '') +
          '\n',
      );
      if (n === GOAL_SIZE && speedup < want)
        misses.push(`${label} ${n}: speed-up ${fmt(speedup, 2)} < ${fmt(want, 2)}`);
    }
  }
  return misses;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
