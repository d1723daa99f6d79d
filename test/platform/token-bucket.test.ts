import type { Redis } from 'ioredis';
import { MemoryTokenBucket } from '../../src/platform/memory-token-bucket';
import { RedisTokenBucket, bucketKeys } from '../../src/platform/redis-token-bucket';
import { openRedis, uniquePrefix } from '../support/redis';

describe('MemoryTokenBucket (sliding-window log)', () => {
  it('grants RPS requests per window, spaced by at least half the even spacing, and says how long to wait', () => {
    let now = 10_000;
    const b = new MemoryTokenBucket({ requestsPerSecond: 4, windowMs: 1000 }, () => now); // gap 125 ms
    expect(b.tryAcquire()).toBe(0);
    expect(b.tryAcquire()).toBe(125);
    now += 125;
    expect(b.tryAcquire()).toBe(0);
    now += 125;
    expect(b.tryAcquire()).toBe(0);
    now += 300;
    expect(b.tryAcquire()).toBe(0); // 4 grants at 0, 125, 250, 550
    now += 200;
    expect(b.tryAcquire()).toBe(250); // window full until the grant at 0 is 1000 ms old
    now += 250;
    expect(b.tryAcquire()).toBe(0);
  });

  it('never grants more than RPS in any window over a long simulated run', () => {
    let now = 0;
    const b = new MemoryTokenBucket({ requestsPerSecond: 7, windowMs: 1000 }, () => now);
    const grants: number[] = [];
    while (now < 20_000) {
      const wait = b.tryAcquire();
      if (wait === 0) grants.push(now);
      now += wait === 0 ? Math.floor((now * 7919) % 97) : wait; // irregular arrivals
    }
    for (let i = 7; i < grants.length; i++) expect(grants[i] - grants[i - 7]).toBeGreaterThanOrEqual(1000);
    expect(grants.length).toBeGreaterThanOrEqual(7 * 19);
  });

  /** Most grants in any window of `windowMs` (a window is closed on the left, open on the right). */
  function maxPerWindow(times: number[], windowMs: number): number {
    let best = 0;
    for (let lo = 0, hi = 0; hi < times.length; hi++) {
      while (times[hi]! - times[lo]! >= windowMs) lo++;
      best = Math.max(best, hi - lo + 1);
    }
    return best;
  }

  it('with the default window, continuous demand gets at least 98 % of RPS and never more than RPS per 1-s window, stale grants handed back included', async () => {
    let now = 0;
    const rps = 50;
    const b = new MemoryTokenBucket({ requestsPerSecond: rps }, () => now);
    const sent: number[] = [];
    let handedBack = 0;
    let pending: string | undefined;
    for (let n = 0; now < 60_000; n++) {
      const { wait, id } = b.tryGrant(pending);
      pending = undefined;
      if (wait > 0) {
        now += wait;
        continue;
      }
      // Every 7th grant goes stale before its request leaves: handed back with the next ask.
      if (n % 7 === 3) {
        pending = id;
        handedBack++;
        now += 1;
        continue;
      }
      sent.push(now);
    }
    expect(handedBack).toBeGreaterThan(100);
    expect(maxPerWindow(sent, 1000)).toBeLessThanOrEqual(rps);
    // Requests sent per second of the run (the first and last second are full windows too).
    expect(sent.length / 60).toBeGreaterThanOrEqual(0.98 * rps);
  });

  it('an unused grant handed back leaves the log, so the slot is not lost', async () => {
    let now = 0;
    const b = new MemoryTokenBucket({ requestsPerSecond: 2, windowMs: 1000 }, () => now);
    const first = await b.acquire();
    now = 400;
    const second = await b.acquire();
    now = 800;
    expect(b.tryAcquire()).toBe(200); // full until the first grant is 1000 ms old
    const fresh = await b.acquire(undefined, second); // the second never left: its slot is reused now
    expect(b.inWindow).toBe(2);
    expect(fresh.id).not.toBe(second.id);
    // Handing back an id that is not in the log (or twice) changes nothing.
    expect(b.tryAcquire(second.id)).toBe(250); // the gap after the fresh grant
    expect(b.tryAcquire(`${first.id}x`)).toBe(250);
    expect(b.inWindow).toBe(2);
  });

  it('holds every caller back during a Retry-After hold', async () => {
    let now = 0;
    const b = new MemoryTokenBucket({ requestsPerSecond: 100, windowMs: 1000 }, () => now);
    await b.holdFor(2500);
    expect(b.tryAcquire()).toBe(2500);
    now = 2500;
    expect(b.tryAcquire()).toBe(0);
  });

  it('rejects nonsense limits', () => {
    expect(() => new MemoryTokenBucket({ requestsPerSecond: 0 })).toThrow(RangeError);
    expect(() => new MemoryTokenBucket({ requestsPerSecond: 5, windowMs: 500 })).toThrow(RangeError);
  });
});

describe('RedisTokenBucket (shared by every pod)', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = openRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('is atomic: three clients racing 30 requests get exactly one grant, the rest a wait within the gap', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const clients = [0, 1, 2].map(
      () =>
        new RedisTokenBucket({
          redis,
          tenant: 'acme',
          clientId: 'cid',
          requestsPerSecond: 5,
          windowMs: 1000,
          keyPrefix,
        }),
    );
    const waits = await Promise.all(Array.from({ length: 30 }, (_, i) => clients[i % 3].tryAcquire()));
    expect(waits.filter((w) => w === 0)).toHaveLength(1);
    for (const w of waits.filter((x) => x !== 0)) {
      expect(w).toBeGreaterThan(0);
      expect(w).toBeLessThanOrEqual(100); // gap = 1000 / 5 * 0.5
    }
  });

  it('a full window makes every client wait for its oldest grant to leave', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const a = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'cid',
      requestsPerSecond: 2,
      windowMs: 1000,
      keyPrefix,
    });
    const b = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'cid',
      requestsPerSecond: 2,
      windowMs: 1000,
      keyPrefix,
    });
    await a.acquire();
    await b.acquire(); // after the 250 ms gap
    const wait = await a.tryAcquire();
    expect(wait).toBeGreaterThan(250); // not the gap: the window (2 per 1000 ms) is full
    expect(wait).toBeLessThanOrEqual(750);
  });

  it('an unused grant handed back leaves the window in the same step as the new grant', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const opts = { redis, tenant: 'acme', clientId: 'cid', requestsPerSecond: 2, windowMs: 1000, keyPrefix };
    const a = new RedisTokenBucket(opts);
    const b = new RedisTokenBucket(opts);
    const window = bucketKeys(keyPrefix, 'acme', 'cid').window;
    const first = await a.acquire();
    const second = await b.acquire(); // after the 250 ms gap
    expect(await a.tryAcquire()).toBeGreaterThan(250); // the window is full
    const fresh = await a.acquire(undefined, second);
    const members = await redis.zrange(window, '0', '-1');
    expect(members.sort()).toEqual([first.id, fresh.id].sort());
    // A member not in the window (already handed back) removes nothing.
    expect(await b.tryAcquire(second.id)).toBeGreaterThan(0);
    expect(await redis.zcard(window)).toBe(2);
  });

  it('keeps tenants and access tokens apart', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const a = new RedisTokenBucket({ redis, tenant: 'acme', clientId: 'one', requestsPerSecond: 1, keyPrefix });
    const b = new RedisTokenBucket({ redis, tenant: 'acme', clientId: 'two', requestsPerSecond: 1, keyPrefix });
    const c = new RedisTokenBucket({ redis, tenant: 'other', clientId: 'one', requestsPerSecond: 1, keyPrefix });
    expect([await a.tryAcquire(), await b.tryAcquire(), await c.tryAcquire()]).toEqual([0, 0, 0]);
    expect(await a.tryAcquire()).toBeGreaterThan(0);
  });

  it('stores no client id in clear and expires its keys', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const b = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'very-identifiable-client',
      requestsPerSecond: 2,
      keyPrefix,
    });
    await b.tryAcquire();
    await b.holdFor(50);
    const keys = await redis.keys(`${keyPrefix}*`);
    expect(keys.sort()).toEqual(
      [
        bucketKeys(keyPrefix, 'acme', 'very-identifiable-client').hold,
        bucketKeys(keyPrefix, 'acme', 'very-identifiable-client').window,
      ].sort(),
    );
    for (const k of keys) {
      expect(k).not.toContain('very-identifiable-client');
      expect(await redis.pttl(k)).toBeGreaterThan(0);
    }
  });

  it('shares a Retry-After hold with every client and only ever extends it', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const a = new RedisTokenBucket({ redis, tenant: 'acme', clientId: 'cid', requestsPerSecond: 50, keyPrefix });
    const b = new RedisTokenBucket({ redis, tenant: 'acme', clientId: 'cid', requestsPerSecond: 50, keyPrefix });
    await a.holdFor(5000);
    await a.holdFor(100); // shorter: must not shorten the hold
    const wait = await b.tryAcquire();
    expect(wait).toBeGreaterThan(4000);
    expect(wait).toBeLessThanOrEqual(5000);
  });

  it('acquire() waits and can be aborted while waiting', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const b = new RedisTokenBucket({ redis, tenant: 'acme', clientId: 'cid', requestsPerSecond: 1, keyPrefix });
    await b.acquire();
    const ac = new AbortController();
    const pending = b.acquire(ac.signal);
    setTimeout(() => ac.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('falls back from EVALSHA to EVAL when the server does not know the script, then uses the cache', async () => {
    // A script tag unique to this test gives shas the server has never seen (no SCRIPT FLUSH:
    // the script cache is global to the server every test file shares).
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const b = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'cid',
      requestsPerSecond: 1,
      keyPrefix,
      scriptTag: keyPrefix,
    });
    const { acquire, hold } = b.scriptShas;
    const exists = async (): Promise<number[]> => (await redis.script('EXISTS', acquire, hold)) as number[];
    expect(await exists()).toEqual([0, 0]);
    // Same results as the cached scripts: a grant, then a wait; a hold that is shared.
    expect(await b.tryAcquire()).toBe(0);
    expect(await b.tryAcquire()).toBeGreaterThan(0);
    expect(await exists()).toEqual([1, 0]); // EVAL loaded it: EVALSHA alone could not have run it
    await b.holdFor(3000);
    expect(await exists()).toEqual([1, 1]);
    const plain = new RedisTokenBucket({ redis, tenant: 'acme', clientId: 'cid', requestsPerSecond: 1, keyPrefix });
    expect(await plain.tryAcquire()).toBeGreaterThan(2000);
    // Now in the cache, the next calls go through EVALSHA and still work.
    expect(await b.tryAcquire()).toBeGreaterThan(2000);
  });

  it('reports an unreachable Redis as RATE_LIMITER_UNAVAILABLE (a 500, not the 503 that says a command did not run)', async () => {
    const { Redis: RedisCtor } = await import('ioredis');
    const dead = new RedisCtor('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    const b = new RedisTokenBucket({ redis: dead, tenant: 'acme', clientId: 'cid', requestsPerSecond: 1 });
    await expect(b.tryAcquire()).rejects.toMatchObject({ code: 'RATE_LIMITER_UNAVAILABLE' });
    dead.disconnect();
  });
});

describe('RedisTokenBucket local line', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = openRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('serves local waiters in order, and one that gives up does not block the others', async () => {
    const keyPrefix = `${uniquePrefix('rl')}:`;
    const b = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'cid',
      requestsPerSecond: 40,
      windowMs: 1000,
      keyPrefix,
    }); // gap 18.75 ms
    const order: number[] = [];
    const ac = new AbortController();
    const waiters = [0, 1, 2, 3].map((i) => b.acquire(i === 1 ? ac.signal : undefined).then(() => order.push(i)));
    ac.abort();
    const results = await Promise.allSettled(waiters);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(order).toEqual([0, 2, 3]);
  });

  it('returns local waiters in line order even when a later one is woken after its slot has passed', async () => {
    const b = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'cid',
      requestsPerSecond: 40,
      keyPrefix: `${uniquePrefix('rl')}:`,
    });
    // What a loaded process sees: the first waiter's slot is still ahead, the second's answer
    // arrives so late that its own slot has passed already.
    const answers = [
      { granted: true, ms: 60 },
      { granted: true, ms: 0 },
    ];
    const reserve = jest.spyOn(b, 'reserve').mockImplementation(async () => answers.shift()!);
    const order: number[] = [];
    await Promise.all([0, 1].map((i) => b.acquire().then(() => order.push(i))));
    expect(reserve).toHaveBeenCalledTimes(2);
    expect(order).toEqual([0, 1]);
  });
});

describe('RedisTokenBucket slots granted ahead (the Lua script on a fake clock)', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = openRedis();
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** Most times (microseconds) in any window of `window`, closed on the left, open on the right. */
  function maxPerWindow(times: number[], window: number): number {
    const ts = [...times].sort((a, b) => a - b);
    let best = 0;
    for (let lo = 0, hi = 0; hi < ts.length; hi++) {
      while (ts[hi]! - ts[lo]! >= window) lo++;
      best = Math.max(best, hi - lo + 1);
    }
    return best;
  }

  /**
   * Three pods with continuous demand, each with its local line (one asker at a time), as
   * acquire() and the request executor do it: a waiter told to wait wakes up to `wakeLag` ms late;
   * a granted request is dispatched up to `sendLag` ms after its slot, and one later than 12 ms
   * (STALE_GRANT_MS) is not sent: its grant is handed back with the pod's next ask.
   */
  async function simulate(opts: {
    rps: number;
    seconds: number;
    aheadMs: number;
    wakeLag: () => number;
    sendLag: () => number;
  }): Promise<{ sent: number[]; kept: number[]; handedBack: number }> {
    // Whole microseconds, as the script counts, so that window edges compare exactly.
    const us = (ms: number): number => Math.round(ms * 1000);
    let now = 0;
    const keyPrefix = `${uniquePrefix('rl-ahead')}:`;
    const bucket = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'cid',
      requestsPerSecond: opts.rps,
      keyPrefix,
      reserveAheadMs: opts.aheadMs,
      clockForTests: () => now / 1000,
    });
    const pods = [0, 1, 2].map(() => ({ askAt: 0, staleIds: [] as { id: string; at: number }[] }));
    const grants = new Map<string, number>();
    const sent: number[] = [];
    let handedBack = 0;
    let n = 0;
    for (;;) {
      const pod = pods.reduce((a, b) => (b.askAt < a.askAt ? b : a));
      now = pod.askAt;
      if (now >= us(opts.seconds * 1000)) break;
      const stale = pod.staleIds.length > 0 && pod.staleIds[0]!.at <= now ? pod.staleIds.shift() : undefined;
      if (stale) grants.delete(stale.id);
      const id = `g${n++}`;
      const r = await bucket.reserve(stale?.id, id, opts.aheadMs);
      if (!r.granted) {
        pod.askAt = now + us(Math.ceil(r.ms) + opts.wakeLag());
        continue;
      }
      const slot = now + us(r.ms);
      grants.set(id, slot);
      const dispatched = slot + us(opts.sendLag());
      if (dispatched - slot > us(12)) {
        handedBack++;
        pod.staleIds.push({ id, at: dispatched });
      } else sent.push(dispatched);
      pod.askAt = now + us(0.5); // the line is free again once the reply is in
    }
    return { sent, kept: [...grants.values()], handedBack };
  }

  /**
   * Requests per second as bench:platform measures them: the mean count of 1-s windows starting
   * every 10 ms, from the 2nd second on (an empty log lets the first window fill at once).
   */
  function steadyRate(sent: number[]): number {
    const ts = [...sent].sort((a, b) => a - b);
    const counts: number[] = [];
    for (let start = 2_000_000, lo = 0, hi = 0; start + 1_000_000 <= ts[ts.length - 1]!; start += 10_000) {
      while (lo < ts.length && ts[lo]! < start) lo++;
      while (hi < ts.length && ts[hi]! < start + 1_000_000) hi++;
      counts.push(hi - lo);
    }
    return counts.reduce((x, y) => x + y, 0) / counts.length;
  }

  function lcg(seed: number): () => number {
    let s = seed;
    return () => {
      s = (s * 1103515245 + 12345) % 2147483648;
      return s / 2147483648;
    };
  }

  it.each([50, 10])(
    'RPS %i, three pods waking up late: never more than RPS in any 1-s window as sent, at least 98 %% of RPS',
    async (rps) => {
      const rnd = lcg(rps);
      const seconds = rps === 50 ? 20 : 40;
      const run = await simulate({
        rps,
        seconds,
        aheadMs: 25,
        // Timers 0-6 ms late, now and then 20 ms; a request usually leaves within 3 ms of its slot,
        // one in 100 after 12 ms (stale: handed back).
        wakeLag: () => (rnd() < 0.05 ? 20 : rnd() * 6),
        sendLag: () => (rnd() < 0.01 ? 13 + rnd() * 20 : rnd() * 3),
      });
      expect(run.handedBack).toBeGreaterThan(0);
      // The log (future slots included) keeps the window; what is sent keeps 1 s.
      expect(maxPerWindow(run.kept, 1_015_000)).toBeLessThanOrEqual(rps);
      expect(maxPerWindow(run.sent, 1_000_000)).toBeLessThanOrEqual(rps);
      expect(steadyRate(run.sent)).toBeGreaterThanOrEqual(0.98 * rps);
    },
  );

  it('without asking ahead, the same wake-up lags lose slots (why the slots are granted ahead)', async () => {
    const rnd = lcg(7);
    const run = await simulate({
      rps: 50,
      seconds: 20,
      aheadMs: 0,
      wakeLag: () => 2 + rnd() * 8,
      sendLag: () => 0,
    });
    expect(maxPerWindow(run.sent, 1_000_000)).toBeLessThanOrEqual(50);
    expect(steadyRate(run.sent)).toBeLessThan(0.98 * 50);
  });

  it('a slot granted ahead is in the future and counts in the window at once', async () => {
    let now = 1_000;
    const keyPrefix = `${uniquePrefix('rl-ahead')}:`;
    const b = new RedisTokenBucket({
      redis,
      tenant: 'acme',
      clientId: 'cid',
      requestsPerSecond: 2,
      windowMs: 1000,
      keyPrefix,
      clockForTests: () => now,
    }); // gap 250 ms
    expect(await b.reserve(undefined, 'a', 25)).toEqual({ granted: true, ms: 0 });
    now = 1_200; // 50 ms before the gap ends: not yet within 25 ms
    expect(await b.reserve(undefined, 'b', 25)).toEqual({ granted: false, ms: 25 });
    now = 1_230;
    expect(await b.reserve(undefined, 'b', 25)).toEqual({ granted: true, ms: 20 }); // the slot at 1,250
    now = 1_240; // window full until the grant at 1,000 is 1,000 ms old
    expect(await b.reserve(undefined, 'c', 25)).toEqual({ granted: false, ms: 735 });
    expect(await redis.zrange(bucketKeys(keyPrefix, 'acme', 'cid').window, '0', '-1', 'WITHSCORES')).toEqual([
      'a',
      '1000000',
      'b',
      '1250000',
    ]);
  });

  it('rejects a reservation horizon longer than the window', () => {
    expect(
      () =>
        new RedisTokenBucket({ redis, tenant: 'acme', clientId: 'cid', requestsPerSecond: 2, reserveAheadMs: 2000 }),
    ).toThrow(RangeError);
  });
});
