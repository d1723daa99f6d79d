import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { FusionError } from '../core/errors';
import { AbortedError, sleep } from './abort';
import { DEFAULT_WINDOW_MS, minGapMs, type Grant, type RateLimiter } from './rate-limiter';

/**
 * Sliding-window log in a Redis sorted set, decided atomically in Lua with the server's clock
 * (pods' clocks may drift; Redis has one). Returns 0 when granted, else microseconds to wait.
 * KEYS[1] = window zset, KEYS[2] = hold key (Retry-After); ARGV = limit, windowUs, member, gapUs,
 * and the member of an unused grant to hand back first ('' for none).
 */
const ACQUIRE_LUA = `
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[1], ARGV[5]) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local hold = tonumber(redis.call('GET', KEYS[2]) or '0')
if hold > now then return hold - now end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local gap = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - window))
local n = redis.call('ZCARD', KEYS[1])
if n > limit then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - limit - 1)
  n = limit
end
local wait = 0
if n >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  wait = tonumber(oldest[2]) + window - now
end
if n > 0 and gap > 0 then
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local w2 = tonumber(newest[2]) + gap - now
  if w2 > wait then wait = w2 end
end
if wait > 0 then
  if wait < 1 then wait = 1 end
  return wait
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now), ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000) + 1000)
return 0
`;

/** KEYS[1] = hold key; ARGV[1] = hold milliseconds. Only ever extends an existing hold. */
const HOLD_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ms = tonumber(ARGV[1])
local untilUs = now + ms * 1000
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if untilUs > cur then
  redis.call('SET', KEYS[1], string.format('%.0f', untilUs), 'PX', math.ceil(ms) + 1000)
end
return 0
`;

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

const ACQUIRE_SHA = sha1(ACQUIRE_LUA);
const HOLD_SHA = sha1(HOLD_LUA);

/**
 * Redis key of the bucket of one tenant and access token. The client id is hashed: the key
 * tells operators which tenant it belongs to without storing credentials in clear. The hash tag
 * keeps both keys in one slot on a Redis Cluster.
 */
export function bucketKeys(prefix: string, tenant: string, clientId: string): { window: string; hold: string } {
  const client = createHash('sha256').update(clientId).digest('hex').slice(0, 16);
  const base = `${prefix}{${tenant}:${client}}`;
  return { window: `${base}:window`, hold: `${base}:hold` };
}

const DEFAULT_BUCKET_PREFIX = 'fusion:ratelimit:';

/** Per bucket key: the promise the next local waiter waits for. */
const localLines = new Map<string, Promise<void>>();

/** Waits for `p` (which never rejects), or rejects with an AbortError when `signal` aborts first. */
function untilOrAbort(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(new AbortedError());
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

export interface RedisBucketOptions {
  redis: Redis;
  tenant: string;
  clientId: string;
  requestsPerSecond: number;
  windowMs?: number;
  keyPrefix?: string;
  /**
   * Appended to the Lua scripts as a comment, which gives them a sha the server has never
   * loaded. For tests of the EVAL fallback: SCRIPT FLUSH would empty the cache of every client
   * of the server, this touches no one else.
   */
  scriptTag?: string;
}

interface Script {
  sha: string;
  lua: string;
}

const SCRIPTS = { acquire: { sha: ACQUIRE_SHA, lua: ACQUIRE_LUA }, hold: { sha: HOLD_SHA, lua: HOLD_LUA } };

function tagged(lua: string, tag: string): Script {
  const text = `${lua}-- ${tag.replace(/[\r\n]/g, ' ')}\n`;
  return { sha: sha1(text), lua: text };
}

export class RedisTokenBucket implements RateLimiter {
  private readonly redis: Redis;
  private readonly keys: { window: string; hold: string };
  private readonly limit: number;
  private readonly windowUs: number;
  private readonly gapUs: number;
  private readonly scripts: { acquire: Script; hold: Script };

  constructor(opts: RedisBucketOptions) {
    const windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
    if (!(opts.requestsPerSecond >= 1) || !(windowMs >= 1000))
      throw new RangeError('requestsPerSecond must be >= 1 and windowMs >= 1000');
    this.redis = opts.redis;
    this.keys = bucketKeys(opts.keyPrefix ?? DEFAULT_BUCKET_PREFIX, opts.tenant, opts.clientId);
    this.limit = opts.requestsPerSecond;
    this.windowUs = Math.round(windowMs * 1000);
    this.gapUs = Math.round(minGapMs(opts.requestsPerSecond, windowMs) * 1000);
    this.scripts =
      opts.scriptTag === undefined
        ? SCRIPTS
        : { acquire: tagged(ACQUIRE_LUA, opts.scriptTag), hold: tagged(HOLD_LUA, opts.scriptTag) };
  }

  /** Shas of the scripts this bucket runs (for tests). */
  get scriptShas(): { acquire: string; hold: string } {
    return { acquire: this.scripts.acquire.sha, hold: this.scripts.hold.sha };
  }

  /** EVALSHA, loading the script with EVAL when the server does not know it (restart, failover). */
  private async run({ sha, lua }: Script, keys: string[], args: (string | number)[]): Promise<number> {
    try {
      try {
        return Number(await this.redis.evalsha(sha, keys.length, ...keys, ...args));
      } catch (e) {
        if (!(e instanceof Error) || !e.message.includes('NOSCRIPT')) throw e;
        return Number(await this.redis.eval(lua, keys.length, ...keys, ...args));
      }
    } catch (e) {
      throw new FusionError(
        'RATE_LIMITER_UNAVAILABLE',
        `Redis is unavailable for the shared platform rate limiter: ${e instanceof Error ? e.message : String(e)}`,
        {
          component: 'rate-limiter',
        },
      );
    }
  }

  /**
   * Grants now and returns 0, or returns the milliseconds to wait before asking again. With
   * `replacing`, that unused grant leaves the log first, whatever the outcome.
   */
  async tryAcquire(replacing?: string, member: string = randomUUID()): Promise<number> {
    const waitUs = await this.run(
      this.scripts.acquire,
      [this.keys.window, this.keys.hold],
      [this.limit, this.windowUs, member, this.gapUs, replacing ?? ''],
    );
    return waitUs <= 0 ? 0 : Math.max(1, Math.ceil(waitUs / 1000));
  }

  /**
   * Waiters of one process line up locally and only the first asks Redis: without it every
   * waiter wakes at the same moment, they all ask Redis, and all but one go back to sleep. That
   * herd costs round trips and event-loop time between a grant and its request being sent.
   */
  async acquire(signal?: AbortSignal, replacing?: Grant): Promise<Grant> {
    const key = this.keys.window;
    const before = localLines.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const line = before.then(() => mine);
    localLines.set(key, line);
    try {
      await untilOrAbort(before, signal);
      let handBack = replacing?.id || undefined;
      for (;;) {
        if (signal?.aborted) await sleep(0, signal);
        // Redis records the grant after this moment; the reply may reach us much later.
        const asked = performance.now();
        const id = randomUUID();
        const wait = await this.tryAcquire(handBack, id);
        handBack = undefined;
        if (wait === 0) return { at: asked, id };
        await sleep(wait, signal);
      }
    } finally {
      done();
      if (localLines.get(key) === line) localLines.delete(key);
    }
  }

  async holdFor(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    await this.run(this.scripts.hold, [this.keys.hold], [Math.ceil(ms)]);
  }
}
