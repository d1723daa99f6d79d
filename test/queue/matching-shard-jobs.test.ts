/**
 * An aggregation whose matching is spread over child jobs (queue mode): same accounts and review
 * forms as one thread, nothing secret and nothing left in Redis, a dead worker's child retried
 * without duplicate output, cancel and a failing child end the run cleanly. Real Redis, real
 * BullMQ workers (in this process: the one-worker-process case, where the parent's own process
 * serves its children).
 */
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import { inProcessShard, type Shard } from '../../src/core/matching/parallel/shard';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import type { MatchingSettings } from '../../src/core/matching/types';
import { QueueShardProvider } from '../../src/queue/queue-shard-provider';
import type { ShardJobData } from '../../src/queue/shard-job-data';
import { ShardJobWorker, type ShardJobWorkerOptions } from '../../src/queue/shard-job-worker';
import { aggregate, PROBABILISTIC, RULES, tenant } from '../core/aggregation-output';
import { checkExclusion } from '../matching/support/exclusion-check';
import { RULES as TWO_RULES } from '../matching/support/two-rules';
import { collect, context, failure } from '../core/support';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

const SECRET = 'top-secret-value';

let redis: Redis;
let prefix: string;
let provider: QueueShardProvider;
const workers: ShardJobWorker[] = [];
/** Child jobs that wrote their slice, over every worker of the test. */
let completed: string[];
/** Completed child jobs that blocked accounts foreseen ahead of their call (held records). */
let held: number;

beforeAll(() => {
  redis = openRedis();
});
afterAll(async () => {
  await redis.quit();
});

beforeEach(async () => {
  prefix = uniquePrefix('shard');
  completed = [];
  held = 0;
  provider = new QueueShardProvider({
    redisUrl: redisUrl(),
    prefix,
    shardJobs: 2,
    minRecords: 0,
    minAccountsPerShard: 16,
    attempts: 2,
  });
  await provider.ready();
});

afterEach(async () => {
  for (const w of workers.splice(0)) await w.close(true);
  await provider.close();
  expect(liveMatchingThreads()).toBe(0);
});

function startWorker(extra: Partial<ShardJobWorkerOptions> = {}): ShardJobWorker {
  const w = new ShardJobWorker({
    redisUrl: redisUrl(),
    prefix,
    logger: context().logger,
    concurrency: 2,
    startShard: inProcessShard,
    ...extra,
  });
  w.worker.on('completed', (job) => {
    completed.push(String(job.id));
    if (job.data.held) held++;
  });
  workers.push(w);
  return w;
}

/** Every key this test's runs and queue may have left: the runs' keys and the shard queue's. */
async function leftovers(): Promise<string[]> {
  const keys = [...(await redis.keys('fusion:shard:*')), ...(await redis.keys(`${prefix}:*`))];
  // BullMQ's own bookkeeping of the queue (meta, id counter, event stream) is not the run's data.
  return keys.filter((k) => !/:(meta|id|events|stalled-check)$/.test(k));
}

/** Every value in Redis, as text in both encodings the run's data could use. */
async function everything(): Promise<string> {
  let out = '';
  const add = (b: Buffer | null): void => {
    if (b) out += b.toString('utf8') + '\n' + b.toString('utf16le') + '\n';
  };
  for (const key of await redis.keys('*')) {
    const type = await redis.type(key);
    out += key + '\n';
    if (type === 'string') add(await redis.getBuffer(key));
    else if (type === 'list') for (const b of await redis.lrangeBuffer(key, 0, -1)) add(b);
    else if (type === 'hash') for (const b of await redis.hgetallBuffer(key).then((h) => Object.values(h))) add(b);
    else if (type === 'zset') out += (await redis.zrange(key, '0', '-1')).join('\n');
    else if (type === 'stream') out += JSON.stringify(await redis.xrange(key, '-', '+'));
    else if (type === 'set') out += (await redis.smembers(key)).join('\n');
  }
  return out;
}

const gate = (): { wait: Promise<void>; open: () => void } => {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
};

describe('aggregation over matching child jobs', () => {
  for (const [label, matching, extra] of [
    ['rules, default batches (250)', RULES, {}],
    // The estimate is the owner's, blocked as the pages come (estimate-feed.ts): the batches are the spread part.
    ['probabilistic, default batches', PROBABILISTIC, {}],
  ] as const) {
    it(
      `${label}: the same accounts and review forms as one thread, nothing secret or left in Redis`,
      async () => {
        const one = await aggregate(tenant(matching, extra, { threads: 1, minRecords: 0 }));
        let scanned = '';
        startWorker({
          // Mid-run, with the run's baseline, new records and job data all in Redis.
          beforeWrite: async () => {
            if (!scanned) scanned = await everything();
          },
        });
        const h = tenant(matching, extra, { threads: 1, minRecords: 0 });
        h.deps.matchingShards = provider;
        expect(await aggregate(h)).toEqual(one);
        // Enough forms that equal results say something (the probabilistic model opens 7 on this tenant).
        expect((one as { reviews: unknown[] }).reviews.length).toBeGreaterThanOrEqual(5);
        // The children did the work, and saw what they needed.
        expect(completed.length).toBeGreaterThanOrEqual(2);
        // The rules model's accounts are blocked ahead of their calls, every one of them; the
        // probabilistic model's batches are blocked in their calls.
        expect(held).toBe(matching === RULES ? completed.length : 0);
        expect(scanned).toContain('fusion:shard:');
        expect(scanned).not.toContain(SECRET);
        expect(scanned).not.toContain('clientSecret');
        expect(await leftovers()).toEqual([]);
      },
      scaled(120_000),
    );
  }

  it(
    'matching threads serve the children by default (the worker entry is there)',
    async () => {
      const one = await aggregate(tenant(RULES, {}, { threads: 1, minRecords: 0 }));
      startWorker({ startShard: undefined });
      const h = tenant(RULES, {}, { threads: 1, minRecords: 0 });
      h.deps.matchingShards = provider;
      expect(await aggregate(h)).toEqual(one);
      expect(completed.length).toBeGreaterThanOrEqual(2);
    },
    scaled(120_000),
  );

  it(
    'a child whose worker stops mid-job (lock lapses) is run again by another worker: same output, no duplicate',
    async () => {
      const one = await aggregate(tenant(RULES, {}, { threads: 1, minRecords: 0 }));
      const stuck = gate();
      const release = gate();
      let stuckJob: string | undefined;
      const dying = startWorker({
        concurrency: 1,
        lockDurationMs: 1000,
        // The queue's stalled check runs once per interval across all its workers (a key with that
        // expiry): at the default 30 s this worker's first check would hold off the next worker's for
        // 30 s. The same lapse is found, 30 s sooner.
        stalledIntervalMs: 200,
        beforeWrite: async (job: Job<ShardJobData>) => {
          if (stuckJob) return;
          stuckJob = String(job.id);
          stuck.open();
          await release.wait;
        },
      });
      const h = tenant(RULES, {}, { threads: 1, minRecords: 0 });
      h.deps.matchingShards = provider;
      const output = aggregate(h);
      await stuck.wait;
      // Hard stop: no lock renewal, the job stays active with its slice unwritten.
      await dying.worker.close(true);
      startWorker({ lockDurationMs: 1000, stalledIntervalMs: 200 });
      expect(await output).toEqual(one);
      expect(completed).toContain(stuckJob);
      // The stopped worker's late write after the run is refused: nothing appears.
      release.open();
      await new Promise((r) => setTimeout(r, 100));
      expect(await leftovers()).toEqual([]);
    },
    scaled(120_000),
  );

  it(
    'cancel: the run ends at once, its waiting children are removed and no key is left',
    async () => {
      const stuck = gate();
      const release = gate();
      startWorker({
        concurrency: 1,
        beforeWrite: async () => {
          stuck.open();
          await release.wait;
        },
      });
      const h = tenant(RULES, {}, { threads: 1, minRecords: 0 });
      h.deps.matchingShards = provider;
      const abort = new AbortController();
      const done = failure(createAccountListCommand(h.deps)({}, h.config, context([], abort.signal)));
      await stuck.wait;
      abort.abort();
      expect((await done).code).toBe('COMMAND_CANCELLED');
      // The second child never started: it is gone from the queue.
      expect(await redis.llen(`${prefix}:fusion-commands-shards:wait`)).toBe(0);
      release.open();
      await new Promise((r) => setTimeout(r, 100));
      expect(await leftovers()).toEqual([]);
    },
    scaled(120_000),
  );

  it(
    'a child that keeps failing fails the run with MATCHING_SHARD_FAILED, naming the job and the cause',
    async () => {
      startWorker({
        startShard: (settings: MatchingSettings): Shard => {
          const real = inProcessShard(settings);
          const exploded = (): Promise<never> => Promise.reject(new Error('engine exploded'));
          return { ...real, block: exploded, blockHeld: exploded };
        },
      });
      const h = tenant(RULES, {}, { threads: 1, minRecords: 0 });
      h.deps.matchingShards = provider;
      const e = await failure(createAccountListCommand(h.deps)({}, h.config, context()));
      expect(e.code).toBe('MATCHING_SHARD_FAILED');
      expect(e.message).toMatch(/matching child job .+-\d+-\d+ failed: engine exploded/);
      // A sibling child running when the run failed cannot be removed (a worker holds it): it ends on
      // its own (its engine explodes, or its retry finds the run gone) and leaves no key either.
      await until('no key of the failed run left', async () => (await leftovers()).length === 0);
    },
    scaled(120_000),
  );

  it(
    'records the owner excludes reach the children before they block held records (threads, as by default)',
    async () => {
      startWorker({ startShard: undefined });
      const settings = TWO_RULES[0]!;
      const shard = provider.forRun({ runId: 'excluded-check', signal: new AbortController().signal })(settings);
      try {
        await checkExclusion(shard, settings);
        expect(completed).toHaveLength(2);
      } finally {
        await shard.close();
      }
      expect(await leftovers()).toEqual([]);
    },
    scaled(120_000),
  );

  it(
    'batches too small for children (batching off, rules model: one account per call) stay in-thread',
    async () => {
      startWorker();
      const h = tenant(RULES, { enableBatching: false }, { threads: 1, minRecords: 0 });
      h.deps.matchingShards = provider;
      await collect(createAccountListCommand(h.deps)({}, h.config, context()));
      expect(completed).toEqual([]);
    },
    scaled(120_000),
  );
});
