/**
 * bench:scale-out, queue mode: one large matching (N identities, N new accounts in batches of 250,
 * each batch joining the baseline after its match(), as the aggregation calls it) through the
 * production queue shards — the owner in this process blocks its slice and merges, children go to
 * BullMQ child jobs on a redis-server of the bench's own — with 1, 2 and 3 worker processes: this
 * process (its ShardJobWorker runs its children in a matching thread) plus 0, 1, 2 spawned ones.
 * The reference is the same matching in one thread, unsharded. Matching alone, not a whole
 * aggregation: a 300k tenant through the fake platform would time the fake platform.
 *
 * Cores obtained by a run: the CPU time of every process involved (this one with its threads, the
 * spawned workers, redis-server) over the run's wall time. On a shared machine the reference may
 * get less than a core too, so the goal compares like with like: speed-up >= 0.7 x (cores the run
 * obtained / cores the reference obtained). Results must equal the reference's; exit 1 on a miss.
 */
import { availableParallelism } from 'node:os';
import { buildMatcher, type MatchRecord, type MatchResult, type MatchingSettings } from '../src/core/matching';
import { buildRemoteRunMatcher } from '../src/core/matching/parallel/parallelism';
import { silentLogger } from '../src/core/ports/logger';
import { QueueShardProvider } from '../src/queue/queue-shard-provider';
import { ShardJobWorker } from '../src/queue/shard-job-worker';
import { MAIN_SETTINGS, NO_MANDATORY_SETTINGS, generate } from './matching-data';
import { spawnRedis } from './harness';
import { resultDigest } from './result-digest';
import { procCpu, startShardWorkerProcess } from './worker-processes';

const SEED = Number(process.env.MATCH_SEED ?? 20261120);
const SIZE = Number(process.env.SCALE_QUEUE_SIZE ?? 300_000);
const PROCESSES = (process.env.SCALE_PROCESSES ?? '1,2,3').split(',').map(Number);
/** main (default) or no-mandatory: the latter scores ~45x more pairs per account (blocking dominates). */
const CONFIG = process.env.SCALE_QUEUE_CONFIG ?? 'main';
const SETTINGS = CONFIG === 'no-mandatory' ? NO_MANDATORY_SETTINGS : MAIN_SETTINGS;
/** New accounts matched; default every one (N). */
const ACCOUNTS = Number(process.env.SCALE_QUEUE_ACCOUNTS ?? SIZE);
const BATCH = 250;

const fmt = (x: number, d = 2): string => x.toLocaleString('en-US', { maximumFractionDigits: d });

const selfCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

interface Matching {
  addBaseline(records: MatchRecord[]): void;
  match(records: MatchRecord[]): Promise<MatchResult>;
}

async function drive(m: Matching, data: ReturnType<typeof generate>): Promise<string> {
  for (let i = 0; i < data.identities.length; i += 1000) m.addBaseline(data.identities.slice(i, i + 1000));
  const results: MatchResult[] = [];
  const n = Math.min(ACCOUNTS, data.accounts.length);
  for (let i = 0; i < n; i += BATCH) {
    const batch = data.accounts.slice(i, Math.min(n, i + BATCH));
    results.push(await m.match(batch));
    m.addBaseline(batch);
  }
  return resultDigest(results);
}

interface Run {
  wallS: number;
  cores: number;
  digest: string;
}

async function measure(pids: number[], body: () => Promise<string>): Promise<Run> {
  const cpu0 = selfCpu() + pids.reduce((a, p) => a + procCpu(p), 0);
  const t0 = performance.now();
  const d = await body();
  const wallS = (performance.now() - t0) / 1000;
  const cpu = selfCpu() + pids.reduce((a, p) => a + procCpu(p), 0) - cpu0;
  return { wallS, cores: cpu / wallS, digest: d };
}

async function sharded(
  url: string,
  processes: number,
  settings: MatchingSettings,
  data: ReturnType<typeof generate>,
  redisPid: number,
): Promise<Run> {
  const prefix = `bench${processes}`;
  const own = new ShardJobWorker({ redisUrl: url, prefix, logger: silentLogger, concurrency: 1 });
  const others = await Promise.all(Array.from({ length: processes - 1 }, () => startShardWorkerProcess(url, prefix)));
  const provider = new QueueShardProvider({ redisUrl: url, prefix, shardJobs: processes });
  await provider.ready();
  await own.worker.waitUntilReady();
  const abort = new AbortController();
  try {
    return await measure([redisPid, ...others.map((c) => c.pid!)], async () => {
      const m = buildRemoteRunMatcher(settings, {}, provider, { runId: `bench-${processes}`, signal: abort.signal });
      try {
        return await drive(
          { addBaseline: (r) => m.addBaseline(r), match: (r) => m.match(r, { topK: Infinity }) },
          data,
        );
      } finally {
        await m.close();
      }
    });
  } finally {
    for (const c of others) c.kill('SIGTERM');
    await Promise.all(others.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await own.close();
    await provider.close();
  }
}

export async function queueScaleOut(): Promise<string[]> {
  const cores = availableParallelism();
  process.stdout.write(
    `bench:scale-out queue mode (seed ${SEED}; ${fmt(SIZE, 0)} identities x ${fmt(Math.min(ACCOUNTS, SIZE), 0)} accounts, ${CONFIG} configuration, batches of ${BATCH}; ${cores} cores on this machine; node ${process.version})\n`,
  );
  const data = generate(SEED, SIZE, SIZE);
  const redis = await spawnRedis();
  const misses: string[] = [];
  try {
    const ref = await measure([redis.pid!], async () => {
      const m = buildMatcher(SETTINGS);
      return drive({ addBaseline: (r) => m.addBaseline(r), match: async (r) => m.match(r, { topK: Infinity }) }, data);
    });
    process.stdout.write(
      `  reference (one thread, no child jobs): ${fmt(ref.wallS, 1)} s, cores obtained ${fmt(ref.cores)}\n`,
    );
    for (const p of PROCESSES) {
      const run = await sharded(redis.url, p, SETTINGS, data, redis.pid!);
      const speedup = ref.wallS / run.wallS;
      const inUse = run.cores / ref.cores;
      const want = 0.7 * inUse;
      const same = run.digest === ref.digest;
      process.stdout.write(
        `  ${p} worker process(es), ${p} child job(s) per call: ${fmt(run.wallS, 1)} s, cores obtained ${fmt(run.cores)}; ` +
          `speed-up ${fmt(speedup)}   goal >= ${fmt(want)} (0.7 x ${fmt(inUse)} cores in use, relative to the reference's): ${speedup >= want ? 'ok' : 'MISSED'}; results ${same ? 'identical' : 'DIFFER'}\n`,
      );
      if (!same) misses.push(`${p} processes: results differ from the reference`);
      if (speedup < want) misses.push(`${p} processes: speed-up ${fmt(speedup)} < ${fmt(want)}`);
    }
  } finally {
    await redis.stop();
  }
  return misses;
}
