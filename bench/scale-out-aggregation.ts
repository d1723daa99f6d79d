/**
 * bench:scale-out, aggregation mode: one whole `std:account:list` of a 300k tenant (N identities,
 * N source accounts on two managed sources, none fused yet: every account is new and is matched
 * against the identities and the accounts before it) with 1, 2 and 3 worker processes, as a worker
 * pod runs it in queue mode: the aggregation in one process (the production runner with the queue's
 * matching shards, the platform client over HTTP), its matching split into BullMQ child jobs that
 * its own ShardJobWorker (a matching thread) and the 0, 1, 2 spawned worker processes serve, on a
 * redis-server of the bench's own; and, rules model, in one process deciding in partitions, one
 * thread each beside the run's own (SCALE_PARTITIONS, default 1 and every core but one;
 * aggregation/planned-matcher.ts); in partitions that 2 (SCALE_PARTITION_PROCESSES) worker processes
 * take as child jobs, one each, the aggregation's own process among them (queue/queue-partition-run.ts);
 * and in one process with the usual matcher's threads and no
 * partitions (SCALE_AGG_THREADS, default every core: a worker with MATCHING_PARTITIONS off). The
 * reference is the same aggregation in one process with one matching thread and no child jobs.
 *
 * The simulator runs in a process of its own (a fresh one per run, same seed, so ids are the same)
 * without rate limit; its CPU is reported, not counted: it is the platform, not the connector, but
 * on this machine it shares the cores. Goal: speed-up >= 0.7 x the cores available to the run over
 * the reference's: a run can keep its owner thread and one matching thread per worker process busy,
 * at most the machine's cores minus what the simulator used; the reference, one. "Cores obtained"
 * (CPU of the aggregation, the worker processes and redis-server over the wall time) is printed
 * beside it: a run that leaves available cores idle misses the goal however little it obtains.
 *
 * Output compared for identity with the reference: every emitted account (connector keys, random per
 * run, replaced by the source accounts they were made from), in order, every review submitted, the
 * summary's counts. Exit 1 (through scale-out.ts) on a difference or a missed goal.
 *
 * Environment: SCALE_AGG_SIZE (300,000), SCALE_AGG_MODEL (rules | probabilistic), SCALE_PROCESSES (1,2,3;
 * empty: none), SCALE_PARTITIONS (1,<cores - 1>; empty: none), SCALE_PARTITION_PROCESSES (2; empty: none),
 * SCALE_AGG_THREADS (<cores>; empty: none),
 * SCALE_AGG_SEED (11), SCALE_AGG_SURNAMES (common,varied: each tenant in turn; common: nearly every
 * account has namesakes and goes to review; varied: the simulator's synthetic surnames, about half do),
 * SCALE_AGG_LIST (simulator: the benches' list; mail-first: partitioned by e-mail; careless: no plan,
 * so partitions give way to the usual matcher), SCALE_AGG_PAGE_MS (0: the simulator answers each page
 * of source accounts this much later, as a tenant whose rate limit paces the pages; the identities and
 * the forms are not delayed).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { CommandType } from '../src/core/command-types';
import type { CommandOutput } from '../src/core/command-runner';
import type { AggregationSummary } from '../src/core/aggregation/aggregation-summary';
import { MODEL_PARAMETERS_KEY } from '../src/core/aggregation/model-parameters';
import { silentLogger } from '../src/core/ports/logger';
import type { PendingReview, ReviewQueue } from '../src/core/ports/review-queue';
import { createPlatformFactory } from '../src/platform/create-platform-client';
import { PartitionJobWorker } from '../src/queue/partition-job-worker';
import { QueuePartitionProvider } from '../src/queue/queue-partition-provider';
import { QueueShardProvider } from '../src/queue/queue-shard-provider';
import { ShardJobWorker } from '../src/queue/shard-job-worker';
import { createProductionRunner } from '../src/runtime/production-runner';
import { spawnRedis, startSimulatorProcess, type SimulatorInfo } from './harness';
import {
  aggregationConfig,
  fusionInstanceId,
  OTHER_MATCHING_LISTS,
  SIMULATOR_MATCHING,
  simulatorConnection,
} from './simulated-aggregation';
import { LoopGaps } from './loop-gaps';
import { mainThreadCpu, procCpu, procPeakRssMb, startShardWorkerProcess } from './worker-processes';

const SEED = Number(process.env.SCALE_AGG_SEED ?? 11);
const TENANTS = (process.env.SCALE_AGG_SURNAMES ?? 'common,varied').split(',').map((t) => {
  if (t !== 'common' && t !== 'varied') throw new Error(`SCALE_AGG_SURNAMES: unknown ${t} (common, varied)`);
  return t;
});
type Surnames = (typeof TENANTS)[number];
const SIZE = Number(process.env.SCALE_AGG_SIZE ?? 300_000);
const LIST = process.env.SCALE_AGG_LIST ?? 'simulator';
const ATTRIBUTES = LIST === 'simulator' ? SIMULATOR_MATCHING : OTHER_MATCHING_LISTS[LIST];
if (!ATTRIBUTES)
  throw new Error(`SCALE_AGG_LIST: unknown ${LIST} (simulator, ${Object.keys(OTHER_MATCHING_LISTS).join(', ')})`);
const MODEL = process.env.SCALE_AGG_MODEL ?? 'rules';
const PAGE_MS = Number(process.env.SCALE_AGG_PAGE_MS ?? 0);
if (!(PAGE_MS >= 0))
  throw new Error(`SCALE_AGG_PAGE_MS: a number of milliseconds, got ${process.env.SCALE_AGG_PAGE_MS}`);
const PROCESSES = (process.env.SCALE_PROCESSES ?? '1,2,3')
  .split(',')
  .map(Number)
  .filter((p) => p > 0);
/**
 * Partitions (one thread each, beside the run's own) of a rules run decided in partitions, in one process
 * (issue 27); default 1 and every core but the run's.
 */
const PARTITIONS = [
  ...new Set(
    (process.env.SCALE_PARTITIONS ?? `1,${availableParallelism() - 1}`)
      .split(',')
      .map(Number)
      .filter((p) => p > 0),
  ),
];

/** Worker processes taking a run's partitions as child jobs, one each, the run's own process among them. */
const PARTITION_PROCESSES = [
  ...new Set(
    (process.env.SCALE_PARTITION_PROCESSES ?? '2')
      .split(',')
      .map(Number)
      .filter((p) => p > 0),
  ),
];

/** Threads of the usual matcher, partitions off, in one process (the worker's default before partitions). */
const USUAL_THREADS = [
  ...new Set(
    (process.env.SCALE_AGG_THREADS ?? `${availableParallelism()}`)
      .split(',')
      .map(Number)
      .filter((t) => t > 1),
  ),
];

interface AggregateArgs {
  sim: SimulatorInfo;
  /** 0: the reference (no child jobs, one matching thread). */
  processes: number;
  /** Matching threads in the aggregation's process (1; decided in partitions: one per partition and the run's). */
  threads: number;
  /** Rules runs decided in partitions (threads - 1 of them, or `processes` child jobs with `remote`). */
  partitions: boolean;
  /** The partitions are child jobs that `processes` worker processes take (partitions, not shards). */
  remote?: boolean;
  redisUrl: string;
  prefix: string;
}

interface AggregateResult {
  wallS: number;
  cpuS: number;
  /**
   * CPU seconds of the aggregation's main thread: the owner's part, which no number of workers spreads
   * (the bench's own hashing of the output, small, is counted in it).
   */
  ownerS: number;
  /**
   * CPU seconds the owner's thread spent in the bench's own hashing of every item and review (its
   * thread's CPU, read around each 1,000 hashed at once, so the machine's load cannot swell it): a
   * deployment spends less there (it queues a review in a map, encodes an item as one NDJSON line).
   */
  verifyS: number;
  peakRssMb: number;
  /** The longest the aggregation process's event loop held a timer (LoopGaps), in s. */
  longestGapS: number;
  /** SHA-256 of every emitted item, every review, the summary's counts and the stored parameters. */
  digest: string;
  emitted: number;
  reviews: number;
  /** The run's own timings (AggregationSummary.timings), ms from its start. */
  timings: AggregationSummary['timings'];
}

const fmt = (x: number, d = 2): string => x.toLocaleString('en-US', { maximumFractionDigits: d });

// ---------------------------------------------------------------- the aggregation (child process)

/**
 * Hashes what it is given 1,000 at a time, in order, and counts the CPU its thread spends there: read
 * from /proc around each 1,000 (a read per hash would cost more than the hash), never by the clock.
 */
class HashedInBatches<T> {
  cpuS = 0;
  private readonly held: T[] = [];
  constructor(private readonly hashOne: (x: T) => void) {}
  add(x: T): void {
    this.held.push(x);
    if (this.held.length >= 1_000) this.flush();
  }
  flush(): void {
    const t = mainThreadCpu();
    for (const x of this.held) this.hashOne(x);
    this.held.length = 0;
    this.cpuS += mainThreadCpu() - t;
  }
}

/**
 * Hashes every review the run submits as it comes (the recording queue of the core keeps only the
 * first ones; keeping 300k reviews would make the bench's own heap, and its GC, part of the figure).
 */
class HashingReviewQueue implements ReviewQueue {
  count = 0;
  readonly hashing = new HashedInBatches<PendingReview>((r) => this.hashReview(r));
  constructor(
    private readonly hash: Hash,
    /** Connector key -> the source accounts it was made from: keys are random per run. */
    private readonly keyOf: ReadonlyMap<string, string>,
  ) {}
  async submit(r: PendingReview): Promise<void> {
    // Checked as it comes, hashed later: a candidate created in this run is emitted (so mapped) before
    // any later batch is matched.
    for (const c of r.candidates)
      if (UUID.test(c.candidateId) && !this.keyOf.has(c.candidateId))
        throw new Error(`bench: a review names connector key ${c.candidateId} before it was emitted`);
    this.hashing.add(r);
  }

  private hashReview(r: PendingReview): void {
    this.count++;
    const candidateId = (id: string): string => {
      const accounts = this.keyOf.get(id);
      return accounts !== undefined ? `<${accounts}>` : id;
    };
    this.hash.update(
      JSON.stringify({
        ...r,
        expiresAt: undefined,
        // Ties in score are ranked by candidate id, and connector keys are random: rank ties by accounts.
        candidates: r.candidates
          .map((c) => ({ ...c, candidateId: candidateId(c.candidateId) }))
          .sort(
            (x, y) =>
              (y.probability ?? 0) - (x.probability ?? 0) ||
              y.score - x.score ||
              x.candidateId.localeCompare(y.candidateId),
          ),
      }),
    );
    this.hash.update('\n');
  }
}

/**
 * SCALE_DUMP_DIR=dir: every run also writes what it hashed (items, reviews; one JSON line each) to
 * dir/run-<processes>-<items|reviews>.ndjson, so that an "output DIFFERS" can be diffed.
 */
function dumping(hash: Hash, processes: number, what: string): Hash {
  const dir = process.env.SCALE_DUMP_DIR;
  if (!dir) return hash;
  const file = join(dir, `run-${processes}-${what}.ndjson`);
  writeFileSync(file, '');
  const update = hash.update.bind(hash);
  return Object.assign(hash, {
    update: (data: string): Hash => {
      appendFileSync(file, data);
      return update(data);
    },
  });
}

/** The model parameters the run stored on the connector's source, without estimatedAt (a clock); null: none. */
async function storedParameters(
  factory: ReturnType<typeof createPlatformFactory>,
  base: Record<string, unknown>,
  sim: SimulatorInfo,
): Promise<unknown> {
  const probe = factory(base, { signal: new AbortController().signal, logger: silentLogger });
  try {
    const attrs = (await probe.getSource(sim.fusionSourceId)).connectorAttributes;
    const stored = attrs[MODEL_PARAMETERS_KEY] as Record<string, unknown> | undefined;
    return stored ? { ...stored, estimatedAt: undefined } : null;
  } finally {
    probe.close();
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function aggregate(a: AggregateArgs): Promise<void> {
  const base = simulatorConnection(a.sim);
  const factory = createPlatformFactory();
  const spConnectorInstanceId = await fusionInstanceId(factory, base, a.sim);

  let provider: QueueShardProvider | undefined;
  let own: ShardJobWorker | PartitionJobWorker | undefined;
  let partitions: QueuePartitionProvider | undefined;
  if (a.remote) {
    partitions = new QueuePartitionProvider({ redisUrl: a.redisUrl, prefix: a.prefix, partitions: a.processes });
    own = new PartitionJobWorker({ redisUrl: a.redisUrl, prefix: a.prefix, logger: silentLogger, concurrency: 1 });
    await partitions.ready();
    await own.worker.waitUntilReady();
  } else if (a.processes > 0) {
    provider = new QueueShardProvider({ redisUrl: a.redisUrl, prefix: a.prefix, shardJobs: a.processes });
    own = new ShardJobWorker({ redisUrl: a.redisUrl, prefix: a.prefix, logger: silentLogger, concurrency: 1 });
    await provider.ready();
    await own.worker.waitUntilReady();
  }
  const hash = dumping(createHash('sha256'), a.processes, 'items');
  const reviewHash = dumping(createHash('sha256'), a.processes, 'reviews');
  const keyOf = new Map<string, string>();
  const reviews = new HashingReviewQueue(reviewHash, keyOf);
  const summaries: AggregationSummary[] = [];
  const runner = createProductionRunner({
    platform: factory,
    reviewQueue: () => reviews,
    onAggregationSummary: (x) => summaries.push(x),
    matchingThreads: a.threads,
    ...(a.partitions ? { matchingPartitions: true } : {}),
    ...(provider ? { matchingShards: provider } : {}),
    ...(partitions ? { remotePartitions: partitions } : {}),
  });
  const config = aggregationConfig(base, spConnectorInstanceId, MODEL, ATTRIBUTES);
  const ctx = { signal: new AbortController().signal, logger: silentLogger, jobId: 'bench', progress: () => undefined };
  // The bench starts reading the other processes' CPU on this message.
  await new Promise<void>((resolve) => process.send?.({ started: true }, undefined, {}, () => resolve()));
  const cpu0 = process.cpuUsage();
  const owner0 = mainThreadCpu();
  const t0 = performance.now();
  const gaps = new LoopGaps();
  let emitted = 0;
  const items = new HashedInBatches<[CommandOutput, string, string]>(([item, key, accounts]) => {
    hash.update(JSON.stringify(item).split(key).join(`<${accounts}>`));
    hash.update('\n');
  });
  for await (const item of runner('std:account:list' as CommandType, {}, config, ctx)) {
    emitted++;
    const key = String(item.identity);
    const accounts = ((item.attributes as Record<string, unknown>).accounts as string[]).join();
    // At once: a later review may name this key.
    keyOf.set(key, accounts);
    items.add([item, key, accounts]);
  }
  items.flush();
  reviews.hashing.flush();
  const wallS = (performance.now() - t0) / 1000;
  const longestGapS = gaps.stop() / 1000;
  const cpu = process.cpuUsage(cpu0);
  const ownerS = mainThreadCpu() - owner0;
  const sum = summaries[0]!;
  hash.update(reviewHash.digest('hex'));
  hash.update(
    JSON.stringify([sum.accountsCreated, sum.accountsUpdated, sum.potentialDuplicates, sum.baselineIdentities]),
  );
  // The probabilistic model's stored parameters are output too (less their timestamp).
  const parameters = await storedParameters(factory, base, a.sim);
  hash.update(JSON.stringify(parameters));
  await own?.close();
  await provider?.close();
  await partitions?.close();
  const result: AggregateResult = {
    wallS,
    cpuS: (cpu.user + cpu.system) / 1e6,
    ownerS,
    verifyS: items.cpuS + reviews.hashing.cpuS,
    peakRssMb: (process.resourceUsage().maxRSS * 1024) / 2 ** 20,
    longestGapS,
    digest: hash.digest('hex'),
    emitted,
    reviews: sum.potentialDuplicates,
    timings: sum.timings,
  };
  if (reviews.count !== sum.potentialDuplicates)
    throw new Error(`bench: ${reviews.count} reviews submitted, the summary counts ${sum.potentialDuplicates}`);
  // Exit explicitly: pooled sockets of the platform client would keep the child alive.
  process.send?.(result, undefined, {}, () => process.exit(0));
}

// ---------------------------------------------------------------- the bench (main process)

function child(args: string[]): ChildProcess {
  return fork(__filename, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // SCALE_CPU_PROF=dir: a CPU profile of each child (the aggregation's owner among them) for a profile of the run.
    execArgv: [
      '--max-old-space-size=8192',
      ...(process.env.SCALE_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SCALE_CPU_PROF}`] : []),
    ],
  });
}

function message<T>(proc: ChildProcess, match: (m: unknown) => boolean = () => true): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (m: unknown): void => {
      if (!match(m)) return;
      proc.off('message', onMessage);
      resolve(m as T);
    };
    proc.on('message', onMessage);
    proc.once('exit', (code) =>
      reject(new Error(`child ${String(proc.spawnargs.slice(2, 3))} exited with ${String(code)}`)),
    );
  });
}

const exited = (p: ChildProcess): Promise<unknown> =>
  new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r(null) : p.once('exit', r)));

interface Run extends AggregateResult {
  /** CPU of the aggregation, the worker processes and redis-server over the wall time. */
  cores: number;
  simulatorCores: number;
  /** The owner's CPU over all CPU the run spent (aggregation, worker processes, redis-server). */
  ownerShare: number;
  /** Peak RSS of each spawned worker process (the owner's process serves child jobs too: peakRssMb). */
  workerPeakRssMb: number[];
  /** Requests the simulator answered in this run. */
  platformCalls: number;
  /** Of which writes to the fusion source: counters written ahead, the processing flag. */
  counterWrites: number;
}

async function run(
  processes: number,
  redis: { url: string; pid: number },
  surnames: Surnames,
  threads = 1,
  partitions = false,
  remote = false,
): Promise<Run> {
  // A fresh simulator per run, same seed, so ids are the same.
  const sim = await startSimulatorProcess({
    tenant: {
      seed: SEED,
      surnames,
      identities: SIZE,
      accountsPerSource: Math.ceil(SIZE / 2),
      duplicateRate: 0.1,
      machineRate: 0,
      disabledSource: false,
    },
    rateLimit: false,
    logRequests: false,
  });
  // IPC is JSON: an Infinity would arrive as null.
  if (PAGE_MS > 0)
    await sim.injectFault({ method: 'GET', pathTemplate: '/v3/accounts', latencyMs: PAGE_MS, times: 1e9 });
  const workers: ChildProcess[] = [];
  try {
    const { info } = sim;
    const prefix = `agg${processes}t${threads}${partitions ? 'p' : ''}${remote ? 'r' : ''}`;
    const serve = remote ? 'partitions' : 'shards';
    for (let i = 1; i < processes; i++) workers.push(await startShardWorkerProcess(redis.url, prefix, serve));
    const agg = child([
      '--aggregate',
      JSON.stringify({ sim: info, processes, threads, partitions, remote, redisUrl: redis.url, prefix }),
    ]);
    const started = message(agg, (m) => (m as { started?: boolean }).started === true);
    const done = message<AggregateResult>(agg, (m) => (m as { started?: boolean }).started !== true);
    await started;
    const others = (): number => [redis.pid, ...workers.map((w) => w.pid!)].reduce((s, p) => s + procCpu(p), 0);
    const others0 = others();
    const sim0 = procCpu(sim.pid);
    const r = await done;
    const othersS = others() - others0;
    const simS = procCpu(sim.pid) - sim0;
    // What the run spends of a tenant's rate limit (a fresh simulator per run: its counters are this run's).
    const { requests, byTemplate } = await sim.counters();
    const workerPeakRssMb = workers.map((w) => procPeakRssMb(w.pid!));
    await exited(agg);
    return {
      ...r,
      cores: (r.cpuS + othersS) / r.wallS,
      simulatorCores: simS / r.wallS,
      ownerShare: r.ownerS / (r.cpuS + othersS),
      workerPeakRssMb,
      platformCalls: requests,
      counterWrites: byTemplate['PATCH /v3/sources/{id}'] ?? 0,
    };
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map(exited));
    await sim.stop();
  }
}

export async function aggregationScaleOut(): Promise<string[]> {
  const misses: string[] = [];
  for (const surnames of TENANTS) misses.push(...(await tenantScaleOut(surnames)));
  return misses;
}

/** The reference and each PROCESSES run on one tenant. */
async function tenantScaleOut(surnames: Surnames): Promise<string[]> {
  process.stdout.write(
    `bench:scale-out aggregation mode (std:account:list, ${fmt(SIZE, 0)} identities, ${fmt(SIZE, 0)} new source accounts, ${MODEL} matching, ${LIST} attribute list, seed ${SEED}, ${surnames} surnames; simulator in its own process${PAGE_MS > 0 ? `, each page of source accounts ${PAGE_MS} ms late` : ''}; ${availableParallelism()} cores on this machine; node ${process.version})\n`,
  );
  const tenant = `${surnames} surnames`;
  const cores = availableParallelism();
  const redis = await spawnRedis();
  const misses: string[] = [];
  const line = (label: string, r: Run): string =>
    `  ${label}: ${fmt(r.wallS, 1)} s, cores obtained ${fmt(r.cores)} (simulator ${fmt(r.simulatorCores)}), owner's share of the CPU ${fmt(100 * r.ownerShare, 0)} %, peak RSS of the aggregation ${fmt(r.peakRssMb, 0)} MiB${r.workerPeakRssMb.length ? ` (worker processes ${r.workerPeakRssMb.map((m) => fmt(m, 0)).join(' / ')} MiB)` : ''}; ${fmt(r.emitted, 0)} accounts, ${fmt(r.reviews, 0)} to review; ${fmt(r.platformCalls, 0)} platform calls (${fmt(r.counterWrites, 0)} source writes); output digest ${r.digest}`;
  try {
    const pid = redis.pid!;
    const ref = await run(0, { url: redis.url, pid }, surnames, 1);
    process.stdout.write(`${line('reference (one process, one matching thread, no child jobs)', ref)}\n`);
    misses.push(...firstItem(`${tenant}, reference's`, ref.timings));
    misses.push(...loopGap(`${tenant}, reference:`, ref.longestGapS));
    // Threads the run can keep busy: the owner and one matching thread per worker process or partition.
    const variants = [
      ...PROCESSES.map((p) => ({
        processes: p,
        threads: 1,
        partitions: false,
        remote: false,
        busy: p + 1,
        label: `${p} worker process(es), ${p} child job(s) per matching call`,
      })),
      ...(MODEL === 'rules'
        ? PARTITIONS.map((p) => ({
            processes: 0,
            threads: p + 1,
            partitions: true,
            remote: false,
            busy: p + 1,
            label: `one process deciding in ${p} partition(s) (${p + 1} threads with the run's own)`,
          }))
        : []),
      ...(MODEL === 'rules'
        ? PARTITION_PROCESSES.map((p) => ({
            processes: p,
            threads: 1,
            partitions: true,
            remote: true,
            busy: p + 1,
            label: `${p} worker process(es) deciding ${p} partition(s) as child jobs, one each`,
          }))
        : []),
      ...USUAL_THREADS.map((t) => ({
        processes: 0,
        threads: t,
        partitions: false,
        remote: false,
        busy: t,
        label: `one process, the usual matcher with ${t} threads (partitions off)`,
      })),
    ];
    for (const v of variants) {
      const r = await run(v.processes, { url: redis.url, pid }, surnames, v.threads, v.partitions, v.remote);
      const speedup = ref.wallS / r.wallS;
      // Cores the run could use: its busy threads, at most the machine's cores the simulator left; the
      // reference could use one.
      const available = (threads: number, x: Run): number => Math.min(threads, cores - x.simulatorCores);
      const inUse = available(v.busy, r) / available(1, ref);
      const want = 0.7 * inUse;
      const same = r.digest === ref.digest;
      process.stdout.write(
        `${line(v.label, r)}; speed-up ${fmt(speedup)} (obtained/reference ${fmt(r.cores / ref.cores)} cores)   goal >= ${fmt(want)} (0.7 x ${fmt(inUse)} cores available, relative to the reference's): ${speedup >= want ? 'ok' : 'MISSED'}; output ${same ? 'identical' : 'DIFFERS'}\n`,
      );
      // What cannot be spread bounds every speed-up (Amdahl): the owner's part of all CPU the run spent.
      const ownerOk = r.ownerShare <= 0.15;
      // The bench's own hashing runs on the owner's thread too. The goal counts it (a deployment encodes
      // every item on that thread instead); the share without it stands beside.
      const without = (r.ownerS - r.verifyS) / (r.ownerS / r.ownerShare - r.verifyS);
      process.stdout.write(
        `    owner's share of all CPU spent: ${fmt(100 * r.ownerShare, 0)} %   goal <= 15 %: ${ownerOk ? 'ok' : 'MISSED'} (the owner's thread ${fmt(r.ownerS, 1)} s, of which the bench's own hashing of the output ${fmt(r.verifyS, 1)} s: ${fmt(100 * without, 0)} % without it)\n`,
      );
      const which = `aggregation, ${tenant}, ${v.label}`;
      if (!ownerOk) misses.push(`${which}: owner's share ${fmt(100 * r.ownerShare, 0)} % > 15 %`);
      if (!same) misses.push(`${which}: output differs from the reference`);
      if (speedup < want) misses.push(`${which}: speed-up ${fmt(speedup)} < ${fmt(want)}`);
      misses.push(...firstItem(`${tenant}, ${v.label}:`, r.timings));
      misses.push(...loopGap(`${tenant}, ${v.label}:`, r.longestGapS));
    }
  } finally {
    await redis.stop();
  }
  return misses;
}

/**
 * Issue 27's goal: the first item within 10 s once the baseline and the source accounts are read (a
 * full probabilistic run holds its accounts until then; a rules run sends its first batch before).
 */
function firstItem(label: string, t: AggregationSummary['timings']): string[] {
  if (t.firstItemMs === undefined || t.baselineMs === undefined || t.sourcesReadMs === undefined)
    return [`aggregation: ${label} run emitted nothing`];
  const after = Math.max(0, t.firstItemMs - Math.max(t.baselineMs, t.sourcesReadMs)) / 1000;
  const ok = after <= 10;
  process.stdout.write(
    `    ${label} first item ${fmt(t.firstItemMs / 1000, 1)} s into the run: baseline read at ${fmt(t.baselineMs / 1000, 1)} s, every source account at ${fmt(t.sourcesReadMs / 1000, 1)} s; first item ${fmt(after, 1)} s after both   goal <= 10 s: ${ok ? 'ok' : 'MISSED'}\n`,
  );
  return ok
    ? []
    : [`aggregation, ${label} first item ${fmt(after, 1)} s after the baseline and the sources were read > 10 s`];
}

/**
 * The run lock renews every 20 s with a 60 s TTL: an event loop held past 40 s loses it. 5 s leaves
 * that margin on a loaded machine (until 2026-12-01 a careless list held it 6-8 s at 5k, quiet).
 */
const LOOP_GAP_GOAL_S = 5;

function loopGap(label: string, gapS: number): string[] {
  const ok = gapS <= LOOP_GAP_GOAL_S;
  process.stdout.write(
    `    ${label} the event loop held at most ${fmt(gapS, 2)} s   goal <= ${LOOP_GAP_GOAL_S} s: ${ok ? 'ok' : 'MISSED'}\n`,
  );
  return ok ? [] : [`aggregation, ${label} event loop held ${fmt(gapS, 1)} s > ${LOOP_GAP_GOAL_S} s`];
}

if (process.argv[2] === '--aggregate') {
  aggregate(JSON.parse(process.argv[3]!) as AggregateArgs).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
