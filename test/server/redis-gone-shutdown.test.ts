/**
 * #28 items 4 and 5, as an operator meets them: a `ROLE=all` server (`fusion-proxy serve`, defaults)
 * whose Redis goes away after it answered a request. Its log names the outage once (not a stack
 * trace per reconnect attempt from every connection), and SIGTERM still stops it: it used to run on
 * for minutes until SIGKILL.
 */
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { freePort } from '../support/free-port';
import { Proc } from '../support/serve-process';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(120_000));

const PASSWORD = 'redis-gone-password-0123456789';

let redis: OwnRedis;
let server: Proc;

beforeAll(async () => {
  redis = await startOwnRedis();
  server = new Proc('all', 'all', await freePort(), {
    REDIS_URL: redis.url,
    PROXY_PASSWORD: PASSWORD,
    JOB_ENCRYPTION_KEY: 'e'.repeat(64),
  });
  await server.start();
});

afterAll(async () => {
  await server?.kill('SIGKILL');
  await redis?.stop();
});

const post = (): Promise<Response> =>
  fetch(`${server.url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'std:test-connection', input: {}, config: { proxyPassword: PASSWORD } }),
  });

it('Redis gone: the outage is logged once, commands get 503; SIGTERM stops the process', async () => {
  // One request answered while Redis is up (the command itself fails: no platform configured).
  expect((await post()).status).toBeGreaterThanOrEqual(400);
  await redis.kill();
  // Every connection of the process meets the outage: readiness, then commands, which are refused.
  for (;;) {
    const r = await fetch(`${server.url}/readyz`);
    if (r.status === 503) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const refused = [];
  for (let i = 0; i < 5; i++) refused.push((await post()).status);
  expect(refused).toEqual([503, 503, 503, 503, 503]);
  // The report comes with the driver's first failed reconnect, which may follow the first 503 (on a
  // quiet machine the refusals come first): wait for it, then stop.
  const outageLines = (): unknown[] =>
    server
      .logLines()
      .filter((l) => /\(REDIS_URL\) (cannot be used|still cannot be used|now fails)/.test(String(l.msg)));
  const end = Date.now() + scaled(30_000);
  while (outageLines().length === 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));

  server.signal('SIGTERM');
  expect(await server.exited).toBe(0);
  const text = server.logs.join('');
  expect(text).toContain('fusion-proxy stopped');
  expect(text).not.toContain('shutdown did not finish');
  // No driver stack traces, no per-connection warnings: the one outage report (and its reminders, each 60 s).
  expect(text).not.toContain('[ioredis] Unhandled error event');
  expect(text).not.toContain('matching child worker: Redis error');
  const outage = outageLines();
  expect(outage.length).toBeGreaterThanOrEqual(1);
  expect(outage.length).toBeLessThanOrEqual(3);
});
