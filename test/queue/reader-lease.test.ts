/**
 * The api's reader lease: an api that dies without a word (SIGKILL, a lost node) cannot set a
 * cancel key, so a worker would run its job for nobody, blocked on a full result stream until
 * REQUEST_TIMEOUT_MS (5 minutes), holding the run lock of an aggregation all that time. The api
 * keeps a lease on every job it reads; a worker stops a job whose lease lapsed and never starts
 * one whose lease is gone. A lease that vanished while its api lives (Redis stalled past the lease's
 * lifetime) is set again by the api's next renewal, and the worker waits for that renewal before it
 * believes the api is gone (#28 item 3).
 */
import { CommandQueue } from '../../src/queue/command-queue';
import { JobCrypto } from '../../src/queue/job-crypto';
import { sealCommand } from '../../src/queue/job-data';
import { READER_LEASE_MS, resultKeys } from '../../src/queue/result-keys';
import { ScriptedRunner } from '../support/scripted-runner';
import {
  HARNESS_JOB_KEY,
  commandBody,
  delay,
  ndjsonItems,
  post,
  startHarness,
  workerFor,
  type Harness,
} from '../server/harness';
import { scaled } from '../support/time-factor';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { until } from '../support/until';
import { redisMonitor } from '../support/redis-monitor';

jest.setTimeout(scaled(60_000));

describe('reader lease (queue mode)', () => {
  let h: Harness;
  let own: OwnRedis;
  beforeAll(async () => {
    // A Redis of its own: the MONITOR below must see only this file's commands.
    own = await startOwnRedis();
    // A gated command shows no progress while the test outlives one lease: the default-length wait.
    h = await startHarness('queue', { REQUEST_TIMEOUT_MS: '300000', REDIS_URL: own.url });
  });
  afterAll(async () => {
    await h?.close();
    await own?.stop();
  });

  const leaseKeys = async (): Promise<string[]> => h.redis!.keys(`fusion:${h.env.QUEUE_NAME}:*:reader`);

  it('is held while the command runs, renewed past its lifetime, and deleted when the request ends', async () => {
    const before = h.runner.count;
    let ttl = -1;
    let heldPastLifetime = false;
    const res = await post(`${h.base}/proxy`, commandBody({ items: 2, gateAfterItems: 1, gate: 'lease-renewed' }), {
      onChunk: (s) => {
        if (!s.includes('"i":0')) return;
        void (async () => {
          const [key] = await leaseKeys();
          ttl = await h.redis!.pttl(key!);
          // Longer than one lease: only the api's renewals keep it.
          await delay(READER_LEASE_MS + 2000);
          heldPastLifetime = (await h.redis!.exists(key!)) === 1;
          h.runner.release('lease-renewed');
        })();
      },
    });
    expect(res.status).toBe(200);
    expect(res.complete).toBe(true);
    expect(ndjsonItems(res.body)).toHaveLength(2);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(READER_LEASE_MS);
    expect(heldPastLifetime).toBe(true);
    expect(h.runner.executions[before]!.cancelled).toBe(false);
    await until('the lease deleted', async () => (await leaseKeys()).length === 0, 10_000);
    expect(await leaseKeys()).toEqual([]);
  });

  it('is taken with the job on the connection that reads the result, in that order, without a PING when reused', async () => {
    // The first request leaves a pooled reader connection behind; the second reuses it at once.
    expect((await post(`${h.base}/proxy`, commandBody({ items: 1 }))).status).toBe(200);
    const monitor = await redisMonitor(own.url);
    try {
      const res = await post(`${h.base}/proxy`, commandBody({ items: 1 }));
      expect(res.status).toBe(200);
    } finally {
      await delay(100);
      monitor.close();
    }
    const seen = monitor.seen.map((e) => ({ ...e, key: e.args.find((a) => a.includes(h.env.QUEUE_NAME)) ?? '' }));
    const lease = seen.findIndex((e) => e.cmd === 'set' && e.key.endsWith(':reader'));
    expect(lease).toBeGreaterThanOrEqual(0);
    const reader = seen[lease]!.source;
    const fromReader = seen.filter((e, i) => e.source === reader && i >= lease && e.cmd !== 'xdel');
    // The lease, then the job (BullMQ's add script, on the queue's keys), then the reads.
    expect(fromReader[0]!.cmd).toBe('set');
    expect(fromReader[1]).toMatchObject({ cmd: 'evalsha', key: expect.stringContaining(`bull:${h.env.QUEUE_NAME}:`) });
    expect(fromReader[2]).toMatchObject({ cmd: 'xread' });
    expect(seen.slice(0, lease).some((e) => e.source === reader && e.cmd === 'ping')).toBe(false);
  });

  it('a lease lost while its api lives (Redis stalled past its lifetime) comes back with the next renewal: the job runs on', async () => {
    const before = h.runner.count;
    let restored = false;
    const res = await post(`${h.base}/proxy`, commandBody({ items: 3, gateAfterItems: 1, gate: 'restored' }), {
      onChunk: (s) => {
        if (!s.includes('"i":0')) return;
        void (async () => {
          // What a Redis paused longer than the lease leaves: the key expired, the api alive.
          const keys = await leaseKeys();
          await h.redis!.del(...keys);
          const end = Date.now() + scaled(30_000);
          while (!restored && Date.now() < end) {
            restored = (await h.redis!.exists(keys[0]!)) === 1;
            await delay(25);
          }
          h.runner.release('restored');
        })();
      },
    });
    expect(restored).toBe(true);
    expect(res.complete).toBe(true);
    expect(ndjsonItems(res.body)).toHaveLength(3);
    expect(h.runner.executions[before]).toMatchObject({ cancelled: false, finished: true });
  });

  it('a worker stops a running job whose api is gone (the lease lapsed and nobody renews it) and drops its result stream', async () => {
    // No api here: the test queues the job with a lease it holds itself, then lets the lease go.
    const runner = new ScriptedRunner();
    const queueName = `${h.env.QUEUE_NAME}-gone`;
    const queue = new CommandQueue(h.redis!, queueName, JobCrypto.fromKey(HARNESS_JOB_KEY));
    const worker = workerFor({ ...h, env: { ...h.env, QUEUE_NAME: queueName } }, runner);
    const keys = resultKeys(queueName, 'gone');
    try {
      const body = commandBody({ items: 3, gateAfterItems: 1, gate: 'never' });
      await h.redis!.set(keys.reader, '1', 'PX', READER_LEASE_MS);
      await queue.add({
        type: 'std:account:list',
        input: body.input as Record<string, unknown>,
        config: body.config as Record<string, unknown>,
        requestId: 'gone',
      });
      await runner.waitFor((e) => e[0]?.emitted === 1, 30_000);
      await h.redis!.del(keys.reader);
      await runner.waitFor((e) => e[0]?.cancelled === true, 60_000);
      expect(runner.executions[0]).toMatchObject({ cancelled: true, finished: false });
      await until(
        'the job stopped and its stream dropped',
        async () => worker.activeJobs === 0 && (await h.redis!.exists(keys.stream)) === 0,
        10_000,
      );
      expect(worker.activeJobs).toBe(0);
      expect(await h.redis!.exists(keys.stream)).toBe(0);
    } finally {
      await worker.close(1000);
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      const left = await h.redis!.keys(`fusion:${queueName}:*`);
      if (left.length) await h.redis!.del(...left);
      await queue.close();
    }
  });

  it('a worker never starts a job whose lease is already gone; a job queued without a lease (older api) still runs', async () => {
    const runner = new ScriptedRunner();
    const queueName = `${h.env.QUEUE_NAME}-direct`;
    const queue = new CommandQueue(h.redis!, queueName, JobCrypto.fromKey(HARNESS_JOB_KEY));
    const worker = workerFor({ ...h, env: { ...h.env, QUEUE_NAME: queueName } }, runner);
    try {
      const body = commandBody({ items: 1 });
      const cmd = {
        type: 'std:account:list' as const,
        input: body.input as Record<string, unknown>,
        config: body.config as Record<string, unknown>,
      };
      // Queued with a lease that nobody holds: the api died between queuing and the start.
      await queue.add({ ...cmd, requestId: 'orphan' });
      // Queued the old way (no lease in the job): still runs.
      const { lease: _lease, ...legacy } = sealCommand(
        { ...cmd, requestId: 'legacy' },
        JobCrypto.fromKey(HARNESS_JOB_KEY),
      );
      await queue.queue.add('std:account:list', legacy, { jobId: 'legacy', removeOnComplete: true });
      await runner.waitFor((e) => e.length === 1, 30_000);
      await until('the orphan job removed', async () => !(await queue.queue.getJob('orphan')), 30_000);
      expect(await queue.queue.getJob('orphan')).toBeUndefined();
      expect(runner.executions.map((e) => e.jobId)).toEqual(['legacy']);
      expect(await h.redis!.exists(resultKeys(queueName, 'orphan').stream)).toBe(0);
    } finally {
      await worker.close(1000);
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      const left = await h.redis!.keys(`fusion:${queueName}:*`);
      if (left.length) await h.redis!.del(...left);
      await queue.close();
    }
  });
});
