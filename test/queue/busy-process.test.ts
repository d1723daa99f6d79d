/**
 * #28 item 6: an api starved of CPU answered `503 ... Redis ... unavailable` while Redis was fine.
 * A timeout this process sees because its own event loop could not run is said to be its own.
 * The starvation here is real: the test blocks the event loop while the api waits on Redis.
 */
import { silentLogger } from '../../src/core/ports/logger';
import { JobCrypto } from '../../src/queue/job-crypto';
import { QueueDispatcher } from '../../src/queue/queue-dispatcher';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { uniquePrefix } from '../support/redis';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(60_000));

function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // CPU starvation: nothing else of this process runs meanwhile.
  }
}

let own: OwnRedis;
let dispatcher: QueueDispatcher;

beforeAll(async () => {
  own = await startOwnRedis();
  dispatcher = new QueueDispatcher({
    redisUrl: own.url,
    crypto: JobCrypto.fromKey('d'.repeat(64)),
    logger: silentLogger,
    requestTimeoutMs: 300_000,
    queueName: uniquePrefix('busy'),
  });
  for (let i = 0; i < 200 && !(await dispatcher.ready()).ok; i++) await new Promise((r) => setTimeout(r, 25));
});

afterAll(async () => {
  await dispatcher.close();
  await own.stop();
});

it('readiness while this process is starved of CPU: the reason names the process, not Redis', async () => {
  const checking = dispatcher.ready();
  blockFor(1500);
  const r = await checking;
  expect(r.ok).toBe(false);
  expect(r.reason).toMatch(/this process was too busy to read Redis' answer in time/);
  expect(r.reason).toMatch(/Redis itself may be fine/);
  expect(r.reason).not.toMatch(/\(REDIS_URL\)/);
  expect(await dispatcher.ready()).toEqual({ ok: true });
});

it('readiness while Redis does not answer (paused): the reason names Redis', async () => {
  own.pause();
  try {
    const r = await dispatcher.ready();
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ \(REDIS_URL\)/);
    expect(r.reason).not.toMatch(/too busy/);
  } finally {
    own.resume();
  }
});
