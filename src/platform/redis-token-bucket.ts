import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { FusionError } from '../core/errors';
import { AbortedError, sleep } from './abort';
import { DEFAULT_WINDOW_MS, minGapMs, type Grant, type RateLimiter } from './rate-limiter';

/**
 * Sliding-window log in a Redis sorted set, decided atomically in Lua with the server's clock
 * (pods' clocks may drift; Redis has one). The log holds each grant at the time it may be used,
 * which may lie up to `ahead` in the future: a waiter asks a little before its slot and is
 * granted the slot itself, instead of asking after it and being granted its wake-up lag late.
 * Every grant time is checked against the limit-th newest (window) and the newest (gap) of the
 * log, so the log, future grants included, never holds more than `limit` in any window.
 * KEYS[1] = window zset, KEYS[2] = hold key (Retry-After); ARGV = limit, windowUs, member, gapUs,
 * the member of an unused grant to hand back first ('' for none), aheadUs, and the time in
 * microseconds ('' for Redis's TIME; tests only). Returns {1, microseconds until the granted
 * slot} or {0, microseconds to wait before asking again}.
 */
const ACQUIRE_LUA = `
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[1], ARGV[5]) end
local now
if ARGV[7] ~= '' then
  now = tonumber(ARGV[7])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local gap = tonumber(ARGV[4])
local ahead = tonumber(ARGV[6])
local at = now
local hold = tonumber(redis.call('GET', KEYS[2]) or '0')
if hold > at then at = hold end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - window))
local n = redis.call('ZCARD', KEYS[1])
if n >= limit then
  local e = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
  local t = tonumber(e[2]) + window
  if t > at then at = t end
end
if n > 0 then
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local t = tonumber(newest[2]) + gap
  if t > at then at = t end
end
local delay = at - now
if delay > ahead then
  local wait = delay - ahead
  if wait < 1 then wait = 1 end
  return {0, wait}
end
redis.call('ZADD', KEYS[1], string.format('%.0f', at), ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil((window + delay) / 1000) + 1000)
return {1, delay}
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

/** Per bucket key: the promise the next local waiter waits for before it asks Redis. */
const localLines = new Map<string, Promise<void>>();
/** Per bucket key: settles once every local waiter that joined so far has returned or given up. */
const localTurns = new Map<string, Promise<void>>();

/** Joins the end of `lines[key]`: `before` settles when those ahead are through, `leave` lets the next through. */
function joinLine(lines: Map<string, Promise<void>>, key: string): { before: Promise<void>; leave: () => void } {
  const before = lines.get(key) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const line = before.then(() => mine);
  lines.set(key, line);
  return {
    before,
    leave: () => {
      done();
      if (lines.get(key) === line) lines.delete(key);
    },
  };
}

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
  /**
   * How far ahead of its slot a waiter asks, and is granted that slot (default
   * RESERVE_AHEAD_MS). It only has to outlast the waiter's wake-up lag (timer, busy event loop)
   * and the round trip: the window is kept on the granted times whatever it is.
   */
  reserveAheadMs?: number;
  /** Milliseconds on a fake clock instead of Redis's TIME (tests of the script only). */
  clockForTests?: () => number;
}

/**
 * A waiter woken this late still gets its slot: a timer on a loaded 2-core machine fires
 * 1-4 ms late, a client parsing a 250-record page holds its event loop for several more.
 */
const RESERVE_AHEAD_MS = 25;

/** The script's answer: granted a slot `ms` from now, or ask again in `ms`. */
export interface Reservation {
  granted: boolean;
  ms: number;
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
  private readonly aheadUs: number;
  private readonly clock: (() => number) | undefined;

  constructor(opts: RedisBucketOptions) {
    const windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
    if (!(opts.requestsPerSecond >= 1) || !(windowMs >= 1000))
      throw new RangeError('requestsPerSecond must be >= 1 and windowMs >= 1000');
    this.redis = opts.redis;
    this.keys = bucketKeys(opts.keyPrefix ?? DEFAULT_BUCKET_PREFIX, opts.tenant, opts.clientId);
    this.limit = opts.requestsPerSecond;
    this.windowUs = Math.round(windowMs * 1000);
    this.gapUs = Math.round(minGapMs(opts.requestsPerSecond, windowMs) * 1000);
    const ahead = opts.reserveAheadMs ?? RESERVE_AHEAD_MS;
    if (!(ahead >= 0 && ahead <= windowMs)) throw new RangeError('reserveAheadMs must be between 0 and the window');
    this.aheadUs = Math.round(ahead * 1000);
    this.clock = opts.clockForTests;
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
  private async run({ sha, lua }: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      try {
        return await this.redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (e) {
        if (!(e instanceof Error) || !e.message.includes('NOSCRIPT')) throw e;
        return await this.redis.eval(lua, keys.length, ...keys, ...args);
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
    const r = await this.reserve(replacing, member, 0);
    return r.granted ? 0 : Math.max(1, Math.ceil(r.ms));
  }

  /** One decision of the script: a slot at most `aheadMs` from now, or how long to wait before asking again. */
  async reserve(
    replacing: string | undefined,
    member: string,
    aheadMs: number = this.aheadUs / 1000,
  ): Promise<Reservation> {
    const reply = await this.run(
      this.scripts.acquire,
      [this.keys.window, this.keys.hold],
      [
        this.limit,
        this.windowUs,
        member,
        this.gapUs,
        replacing ?? '',
        Math.round(aheadMs * 1000),
        this.clock ? Math.round(this.clock() * 1000) : '',
      ],
    );
    const [granted, us] = Array.isArray(reply) ? reply.map(Number) : [];
    if (us === undefined || !(us >= 0))
      throw new FusionError('RATE_LIMITER_UNAVAILABLE', 'the shared rate limiter answered something unexpected', {
        component: 'rate-limiter',
      });
    return { granted: granted === 1, ms: us / 1000 };
  }

  /**
   * Waiters of one process line up locally and only the first asks Redis: without it every
   * waiter wakes at the same moment, they all ask Redis, and all but one go back to sleep. That
   * herd costs round trips and event-loop time between a grant and its request being sent.
   * A waiter granted a slot ahead leaves the line at once and sleeps until its slot.
   */
  async acquire(signal?: AbortSignal, replacing?: Grant): Promise<Grant> {
    const key = this.keys.window;
    const line = joinLine(localLines, key);
    // Slots are granted in line order, but a loaded process can wake a later waiter whose slot
    // has passed before an earlier one's timer fires: it returns after those ahead of it.
    const turn = joinLine(localTurns, key);
    try {
      let reserved: { at: number; until: number; id: string } | undefined;
      try {
        await untilOrAbort(line.before, signal);
        let handBack = replacing?.id || undefined;
        for (;;) {
          if (signal?.aborted) await sleep(0, signal);
          // Redis records the grant for `asked + ms` at the earliest, on the local clock.
          const asked = performance.now();
          const id = randomUUID();
          const r = await this.reserve(handBack, id);
          handBack = undefined;
          if (r.granted) {
            // Its use is counted from the earliest local time of the slot (staleness check before
            // dispatch); it is not used before the latest.
            reserved = { at: asked + r.ms, until: performance.now() + r.ms, id };
            break;
          }
          await sleep(r.ms, signal);
        }
      } finally {
        line.leave();
      }
      try {
        const wait = reserved.until - performance.now();
        if (wait > 0) await sleep(Math.ceil(wait), signal);
        await untilOrAbort(turn.before, signal);
      } catch (e) {
        // The slot will not be used: give it back for others (best effort).
        this.redis.zrem(key, reserved.id).catch(() => undefined);
        throw e;
      }
      return { at: reserved.at, id: reserved.id };
    } finally {
      turn.leave();
    }
  }

  async holdFor(ms: number): Promise<void> {
    if (!(ms > 0)) return;
    await this.run(this.scripts.hold, [this.keys.hold], [Math.ceil(ms)]);
  }
}
