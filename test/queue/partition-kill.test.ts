/**
 * Issue 27's kill test: a worker PROCESS holding a partition of a run is killed (SIGKILL) mid-run. Its
 * claim lapses, the run takes the partition over and replays it: the run completes with the one-thread
 * run's items and review forms, nothing twice, nothing left in Redis. The worker is a real process
 * (the production PartitionJobWorker, bundled), the run's own process serves the other partition.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import { PartitionJobWorker } from '../../src/queue/partition-job-worker';
import { QueuePartitionProvider } from '../../src/queue/queue-partition-provider';
import { context, type LogLine } from '../core/support';
import { ONE, aggregate, expectSameOutput, tenant } from '../core/partitions-tenant';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';
import { bundle } from '../support/serve-process';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

const ROOT = resolve(__dirname, '..', '..');

/** The process, once it says `ready`; `said` resolves with each line it prints after. */
async function startWorkerProcess(
  prefix: string,
): Promise<{ proc: ChildProcess; said: (line: string) => Promise<void> }> {
  const proc = spawn(
    process.execPath,
    [bundle(join(__dirname, 'support', 'partition-worker-process.ts'), 'partition-worker')],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', REDIS_URL: redisUrl(), BENCH_PREFIX: prefix, CLAIM_TTL_MS: '1000' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  const said = (line: string): Promise<void> =>
    until(`the worker process to say ${line}`, () => out.includes(`${line}\n`), 60_000);
  await said('ready');
  return { proc, said };
}

let redis: Redis;
beforeAll(() => {
  redis = openRedis();
});
afterAll(async () => {
  await redis.quit();
});

it(
  'a worker process holding a partition is killed mid-run: the run replays the partition, the one-thread output, nothing left in Redis',
  async () => {
    const extra = { enableBatching: true, batchSize: 50 };
    const { raw: _one, ...one } = await aggregate(tenant(ONE, extra));
    const prefix = uniquePrefix('kill');
    const { proc, said } = await startWorkerProcess(prefix);
    const exited = new Promise<NodeJS.Signals | null>((r) => proc.once('exit', (_code, signal) => r(signal)));
    // The run's own process serves the partition queue too, one partition at a time.
    const own = new PartitionJobWorker({
      redisUrl: redisUrl(),
      prefix,
      logger: context().logger,
      concurrency: 1,
      // Whatever the test machine's container allows: the test counts takeovers.
      memoryLimit: undefined,
      claimTtlMs: 1_000,
    });
    const provider = new QueuePartitionProvider({
      redisUrl: redisUrl(),
      prefix,
      partitions: 2,
      checkMs: 100,
      claimTtlMs: 1_000,
    });
    try {
      await provider.ready();
      const t = tenant({ threads: 1, minRecords: 0, partitions: true }, extra);
      t.h.deps.remotePartitions = provider;
      const lines: LogLine[] = [];
      const running = aggregate(t, lines);
      await said('holding');
      proc.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const { raw: _many, ...many } = await running;
      expectSameOutput(many, one);
      expect(one.sameRun).toBeGreaterThanOrEqual(10);
      // The killed process's partition, and only it, was decided again by the run.
      expect(lines.filter((l) => /^Matching partition \d is decided in this process/.test(l.msg))).toHaveLength(1);
      expect(await redis.keys(`fusion:part:${prefix}:*`)).toEqual([]);
    } finally {
      proc.kill('SIGKILL');
      await own.close();
      await provider.close();
    }
    expect(liveMatchingThreads()).toBe(0);
  },
  scaled(120_000),
);
