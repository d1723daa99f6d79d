import http from 'node:http';
import net from 'node:net';
import { Worker } from 'bullmq';
import { Redis as IORedis, type Redis } from 'ioredis';
import { type CommandWorker } from '../../src/queue/command-worker';
import { JobCrypto } from '../../src/queue/job-crypto';
import { waitListKey } from '../../src/queue/queue-names';
import { resultKeys } from '../../src/queue/result-keys';
import { CLIENT_SECRET, PASSWORD, commandBody, delay, post, startHarness, workerFor } from '../server/harness';
import { redisUrl } from '../support/redis';
import { ScriptedRunner } from '../support/scripted-runner';
import { until, untilValue } from '../support/until';

/** Every value stored under keys matching `pattern`, whatever the Redis type. */
async function dumpKeys(redis: Redis, pattern: string): Promise<{ keys: string[]; text: string }> {
  const keys = await redis.keys(pattern);
  const parts: string[] = [];
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === 'string') parts.push(String(await redis.get(key)));
    else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
    else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
    else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
  }
  return { keys, text: parts.join('\n') };
}

/** Starts a POST and returns a handle to cut it. */
function startRequest(url: string, body: unknown): { cut: () => void; done: Promise<void> } {
  const payload = JSON.stringify(body);
  const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } });
  const done = new Promise<void>((resolve) => {
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.on('response', (res) => {
      res.resume();
      res.on('error', () => resolve());
    });
  });
  req.end(payload);
  return { cut: () => req.destroy(), done };
}

describe('queue mode', () => {
  it('keeps a waiting job in the list waitListKey() names (KEDA trigger), with no secret in Redis; a cut request removes it', async () => {
    const h = await startHarness('queue', { ROLE: 'api' });
    try {
      const key = waitListKey(h.env.QUEUE_NAME);
      const req = startRequest(`${h.base}/proxy`, commandBody());
      const ids = await untilValue(
        'the job in the wait list',
        async () => {
          const l = (await h.redis!.exists(key)) ? await h.redis!.lrange(key, 0, -1) : [];
          return l.length > 0 ? l : undefined;
        },
        5000,
        20,
      );
      expect(await h.redis!.type(key)).toBe('list');
      expect(ids).toHaveLength(1);
      expect(await h.redis!.exists(`bull:${h.env.QUEUE_NAME}:${ids[0]}`)).toBe(1);
      const dump = await dumpKeys(h.redis!, `*${h.env.QUEUE_NAME}*`);
      expect(dump.text).toContain('std:account:list');
      expect(dump.text).not.toContain(CLIENT_SECRET);
      expect(dump.text).not.toContain(PASSWORD);
      expect(dump.text).not.toContain('tenant.example');
      // The api waits with XREAD BLOCK on a connection of its own: the shared one still answers at once.
      const blocked = (await h.redis!.client('LIST')) as string;
      expect(blocked.split('\n').some((l) => / flags=b /.test(l) && / cmd=xread/.test(l))).toBe(true);
      expect((await h.server.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      req.cut();
      await req.done;
      await until('the wait list empty', async () => (await h.redis!.llen(key)) === 0, 5000, 20);
      expect(await h.redis!.exists(`bull:${h.env.QUEUE_NAME}:${ids[0]}`)).toBe(0);
    } finally {
      await h.close();
    }
  });

  it('a job whose client left and that ends before the worker polls the cancel leaves no stream behind', async () => {
    const h = await startHarness('queue', { ROLE: 'api' });
    const runner = new ScriptedRunner();
    // The poll never comes in this test: only the end-of-job check can see that the api withdrew the job.
    const worker = workerFor(h, runner, { cancelPollMs: 600_000 });
    try {
      const req = startRequest(`${h.base}/proxy`, commandBody({ items: 2, gateAfterItems: 1, gate: 'left' }));
      await runner.waitFor((e) => e.length === 1 && e[0]!.emitted === 1);
      const keys = resultKeys(h.env.QUEUE_NAME, runner.executions[0]!.jobId);
      req.cut();
      await req.done;
      // A liveness bound, not a speed goal: one CI run under contention took over 10 s here.
      await until('the api withdrew the job', async () => (await h.redis!.exists(keys.cancel)) === 1, 20_000, 20);
      runner.release('left');
      await runner.waitFor((e) => e[0]!.finished);
      expect(runner.executions[0]!.cancelled).toBe(false);
      // The job's last entries recreated the stream the api had deleted; the worker drops it with the cancel key.
      await until(
        'no stream, cancel key or reader lease left',
        async () => (await h.redis!.exists(keys.stream, keys.cancel, keys.reader)) === 0,
        5000,
        20,
      );
    } finally {
      await worker.close();
      await h.close();
    }
  });

  it('answers 504 when no worker starts the job within REQUEST_TIMEOUT_MS, and removes the job', async () => {
    const h = await startHarness('queue', { ROLE: 'api', REQUEST_TIMEOUT_MS: '300' });
    try {
      const res = await post(`${h.base}/proxy`, commandBody());
      expect(res.status).toBe(504);
      expect(JSON.parse(res.body).error).toMatch(/no worker started the command/);
      await until(
        'the wait list empty',
        async () => (await h.redis!.llen(waitListKey(h.env.QUEUE_NAME))) === 0,
        5000,
        20,
      );
    } finally {
      await h.close();
    }
  });

  it('has no secret in the job hash or result stream while a job runs', async () => {
    const h = await startHarness('queue');
    try {
      const req = startRequest(`${h.base}/proxy`, commandBody({ items: 3, hangAfterItems: 2 }));
      await h.runner.waitFor((e) => e[0]?.emitted === 2);
      await delay(30);
      const dump = await dumpKeys(h.redis!, `*${h.env.QUEUE_NAME}*`);
      expect(dump.keys.some((k) => k.endsWith(':out'))).toBe(true);
      expect(dump.keys.some((k) => k === `bull:${h.env.QUEUE_NAME}:${h.runner.executions[0]!.jobId}`)).toBe(true);
      expect(dump.text).not.toContain(CLIENT_SECRET);
      expect(dump.text).not.toContain(PASSWORD);
      // The result stream expires by itself if nobody cleans it up (api and worker both gone).
      const stream = dump.keys.find((k) => k.endsWith(':out'))!;
      expect(await h.redis!.pttl(stream)).toBeGreaterThan(0);
      req.cut();
      await h.runner.waitFor((e) => e[0]?.cancelled === true);
      // The api deletes the result stream; the job is removed when the worker finishes it.
      await until(
        'no result stream',
        async () => (await h.redis!.keys(`*${h.env.QUEUE_NAME}*:out`)).length === 0,
        5000,
        20,
      );
    } finally {
      await h.close();
    }
  });

  it('fails the command with a clear error when api and worker keys differ', async () => {
    const h = await startHarness('queue', { ROLE: 'api' });
    const runner = new ScriptedRunner();
    const worker = workerFor(h, runner, { key: 'b'.repeat(64) });
    try {
      const res = await post(`${h.base}/proxy`, commandBody());
      expect(res.status).toBe(500);
      expect(JSON.parse(res.body).error).toMatch(/different JOB_ENCRYPTION_KEY or PROXY_PASSWORD/);
      expect(runner.count).toBe(0);
    } finally {
      await worker.close();
      await h.close();
    }
  });

  it('fails, rather than runs twice, a job whose first worker died', async () => {
    const h = await startHarness('queue', { ROLE: 'api' });
    const deadConnection = new IORedis(redisUrl(), { maxRetriesPerRequest: null });
    const dead = new Worker(h.env.QUEUE_NAME, null, { connection: deadConnection, autorun: false, lockDuration: 300 });
    const runner = new ScriptedRunner();
    let worker: CommandWorker | undefined;
    try {
      const pending = post(`${h.base}/proxy`, commandBody());
      await until(
        'a job in the wait list',
        async () => (await h.redis!.llen(waitListKey(h.env.QUEUE_NAME))) > 0,
        5000,
        20,
      );
      // A worker takes the job and dies: it never renews its lock nor finishes.
      const taken = await dead.getNextJob('dead-worker-token');
      expect(taken?.attemptsStarted).toBe(1);
      worker = workerFor(h, runner, { stalledIntervalMs: 200 });
      const res = await pending;
      expect(res.status).toBe(500);
      expect(JSON.parse(res.body).error).toMatch(/the worker running this command stopped; run the command again/);
      expect(runner.count).toBe(0);
    } finally {
      await worker?.close();
      await dead.close(true);
      await deadConnection.quit();
      await h.close();
    }
  });

  describe.each(['api', 'all'])('Redis unreachable at start (ROLE=%s)', (role) => {
    it('fails readiness and answers 503 JSON without hanging', async () => {
      const port = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as net.AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      const h = await startHarness('queue', { ROLE: role, REDIS_URL: `redis://127.0.0.1:${port}` });
      try {
        const where = `Redis at redis://127.0.0.1:${port} (REDIS_URL): connection refused (ECONNREFUSED)`;
        const res = await post(`${h.base}/proxy`, commandBody());
        expect(res.status).toBe(503);
        expect(JSON.parse(res.body).error).toContain(`the job queue is unavailable: ${where}`);
        const ready = await h.server.app.inject({ method: 'GET', url: '/readyz' });
        expect(ready.statusCode).toBe(503);
        expect(ready.json().error).toBe(where);
        expect(h.runner.count).toBe(0);
        const logs = h.logs.join('');
        expect(logs).toContain(`Redis at redis://127.0.0.1:${port} (REDIS_URL) cannot be used: connection refused`);
        expect(logs).not.toContain(PASSWORD);
      } finally {
        await h.close();
      }
    });
  });

  it('gives BullMQ the lock and stall settings of the environment (WORKER_LOCK_MS, WORKER_STALLED_INTERVAL_MS)', async () => {
    const h = await startHarness('queue', {
      ROLE: 'worker',
      PROXY_PASSWORD: '',
      WORKER_LOCK_MS: '8000',
      WORKER_STALLED_INTERVAL_MS: '2000',
    });
    try {
      expect(h.server.worker!.worker.opts).toMatchObject({ lockDuration: 8000, stalledInterval: 2000 });
    } finally {
      await h.close();
    }
  });

  it('serves only probes and metrics on a worker-only process', async () => {
    const h = await startHarness('queue', { ROLE: 'worker', PROXY_PASSWORD: '' });
    try {
      await until(
        'ready',
        async () => (await h.server.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200,
        5000,
        20,
      );
      expect((await h.server.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
        status: 'ready',
        mode: 'worker',
      });
      expect((await h.server.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
      const res = await post(`${h.base}/proxy`, commandBody());
      expect(res.status).toBe(404);
      // How soon a dead worker's job is noticed is the operator's: BullMQ gets the environment's values.
      expect(h.server.worker!.worker.opts).toMatchObject({ lockDuration: 30_000, stalledInterval: 10_000 });
    } finally {
      await h.close();
    }
  });

  it('JobCrypto seals and opens, and rejects a tampered payload', () => {
    const a = JobCrypto.fromKey('c'.repeat(64));
    const sealed = a.encrypt(JSON.stringify({ clientSecret: CLIENT_SECRET }));
    expect(sealed).not.toContain(CLIENT_SECRET);
    expect(JSON.parse(a.decrypt(sealed))).toEqual({ clientSecret: CLIENT_SECRET });
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64');
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString('base64');
    expect(() => a.decrypt(parts.join('.'))).toThrow(/cannot decrypt/);
    expect(() => JobCrypto.fromKey('short')).toThrow(/JOB_ENCRYPTION_KEY must be 32 bytes/);
    const p1 = JobCrypto.fromPassword(PASSWORD);
    const p2 = JobCrypto.fromPassword(PASSWORD);
    expect(p2.decrypt(p1.encrypt('x'))).toBe('x');
  });
});
