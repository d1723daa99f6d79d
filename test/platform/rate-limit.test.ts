import type { Redis } from 'ioredis';
import type { PlatformClient } from '../../src/platform/platform-client';
import { openRedis, uniquePrefix } from '../support/redis';
import { clientFor, collect, maxInWindow, startSim, type RunningSimulator } from './support';

const STORM_POLICY = { baseDelayMs: 20, maxDelayMs: 500, maxAttempts: 8, attemptTimeoutMs: 10_000 };

describe('rate limiting against the simulator', () => {
  let sim: RunningSimulator;
  let redis: Redis;
  const clients: PlatformClient[] = [];
  beforeAll(async () => {
    sim = await startSim({ rateLimit: false, tenant: { identities: 150, accountsPerSource: 100 } });
    redis = openRedis();
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await sim.close();
    await redis.quit();
  });
  beforeEach(() => {
    sim.control.clearFaults();
    sim.control.resetLog();
    sim.control.setRateLimit(false);
  });

  it('a 429 storm completes with every page, and the rate never exceeds the configured RPS', async () => {
    // The platform allows 10 per second; we are configured for 40: most pages meet a 429 first.
    sim.control.setRateLimit({ requests: 10, windowMs: 1000 });
    // One more 429 with an HTTP-date Retry-After.
    sim.control.injectFault({
      pathTemplate: '/v3/accounts',
      page: 4,
      status: 429,
      retryAfter: new Date(Date.now() + 1000).toUTCString(),
      times: 1,
    });
    const client = clientFor(
      sim,
      { requestsPerSecond: 40, maxConcurrentRequests: 4, batchSize: 10 },
      { policy: STORM_POLICY },
    );
    clients.push(client);
    const hrId = [...sim.tenant.sources.values()].find((s) => s.name === 'HR')!.id;
    const ids = (await collect(client.listAccounts({ sourceId: hrId }))).map((a) => a.id);
    expect(ids.sort()).toEqual([...sim.tenant.accountsOfSource(hrId).keys()].sort());
    const log = sim.control.requestLog().filter((e) => e.template !== '/oauth/token');
    expect(log.filter((e) => e.status === 429).length).toBeGreaterThan(0);
    expect(maxInWindow(log.map((e) => e.at))).toBeLessThanOrEqual(40);
    // Every page was eventually answered 200.
    const okOffsets = new Set(log.filter((e) => e.status === 200).map((e) => e.query.offset));
    // (one more page past the last full one: only a short or empty page ends a listing)
    const pages = Array.from({ length: Math.floor(ids.length / 10) + 1 }, (_, i) => String(i * 10));
    expect(okOffsets).toEqual(new Set(pages));
  });

  it('an exhausted 429 fails with advice to lower Requests per second', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/sources', status: 429, retryAfter: '0', times: Infinity });
    const client = clientFor(sim, { requestsPerSecond: 100 }, { policy: { ...STORM_POLICY, maxAttempts: 3 } });
    clients.push(client);
    const err = await collect(client.listSources()).catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({ code: 'PLATFORM_RATE_LIMITED' });
    expect((err as Error).message).toMatch(/Lower "Requests per second" \(now 100\)/);
    expect(sim.control.requestLog().filter((e) => e.template === '/v3/sources')).toHaveLength(3);
  });

  it('three clients sharing one Redis bucket together stay under the configured rate', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    // Dispatch times are what the limiter controls; arrival times at the simulator also carry the
    // scheduling of a loaded machine (requests queued behind a busy event loop arrive bunched).
    const dispatched: number[] = [];
    const onDispatch = (endpoint: string): void => {
      if (endpoint === '/v3/accounts') dispatched.push(performance.now());
    };
    const three = [0, 1, 2].map(() =>
      clientFor(sim, { requestsPerSecond: 20, batchSize: 5 }, { redis, keyPrefix, onDispatch }),
    );
    clients.push(...three);
    const sourceIds = [...sim.tenant.sources.values()]
      .filter((s) => s.name !== 'Legacy' && s.name !== 'Identity Fusion')
      .map((s) => s.id)
      .slice(0, 3);
    const lists = await Promise.all(three.map((c, i) => collect(c.listAccounts({ sourceId: sourceIds[i] }))));
    lists.forEach((accounts, i) => expect(accounts).toHaveLength(sim.tenant.accountsOfSource(sourceIds[i]).size));
    const log = sim.control.requestLog().filter((e) => e.template === '/v3/accounts');
    expect(log.length).toBeGreaterThan(40);
    expect(dispatched).toHaveLength(log.length);
    expect(maxInWindow(dispatched)).toBeLessThanOrEqual(20);
  });

  it('a 429 holds every client sharing the bucket, not only the one that got it', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const a = clientFor(sim, { requestsPerSecond: 50 }, { redis, keyPrefix });
    const b = clientFor(sim, { requestsPerSecond: 50 }, { redis, keyPrefix });
    clients.push(a, b);
    const hrId = [...sim.tenant.sources.values()].find((s) => s.name === 'HR')!.id;
    await a.getSource(hrId); // tokens in hand for both, so only the hold can delay them
    await b.getSource(hrId);
    sim.control.resetLog();
    sim.control.injectFault({ pathTemplate: '/v3/sources/{id}', status: 429, retryAfter: '1', times: 1 });
    let stop = false;
    const bLoop = (async () => {
      while (!stop) await b.getAccount('missing');
    })();
    await new Promise((r) => setTimeout(r, 100));
    await a.getSource(hrId);
    stop = true;
    await bLoop;
    const log = sim.control.requestLog();
    const hit = log.find((e) => e.status === 429)!;
    const during = log.filter((e) => e.at > hit.at + 100 && e.at < hit.at + 900);
    expect(log.filter((e) => e.template === '/v3/accounts/{id}' && e.at < hit.at).length).toBeGreaterThan(0);
    expect(during).toEqual([]);
  });
});
