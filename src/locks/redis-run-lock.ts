import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RunLock } from '../core/ports/run-lock';

// Compare-and-act scripts: a run can only renew or free the lock while its own token is stored,
// so a run whose lock expired never deletes the lock of the run that took over.
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
// The scope is created once per Redis and read on every call, never cached: after a wipe every
// worker must agree on the new one (a cached old scope would make this worker's flags look foreign).
const SCOPE = `redis.call('SET', KEYS[1], ARGV[1], 'NX') return redis.call('GET', KEYS[1])`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** The run lock of queue mode, shared by every worker through Redis (SET NX PX + token-checked Lua). */
export class RedisRunLock implements RunLock {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'fusion:run-lock:',
  ) {}

  /** Created once per Redis (SET NX) and shared by every worker on it; a wiped Redis is a new scope. */
  async scope(): Promise<string> {
    const id = await this.redis.eval(SCOPE, 1, `${this.prefix.replace(/:$/, '')}-scope`, `redis:${randomUUID()}`);
    if (typeof id !== 'string') throw new Error('the run-lock scope could not be read from Redis');
    return id;
  }

  async acquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    const ok = await this.redis.set(this.prefix + key, token, 'PX', ttlMs, 'NX');
    return ok === 'OK';
  }

  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    const n = await this.redis.eval(RENEW, 1, this.prefix + key, token, String(ttlMs));
    return n === 1;
  }

  async holder(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.prefix + key)) ?? undefined;
  }

  async release(key: string, token: string): Promise<boolean> {
    // While the connection is down the call would wait out the client's reconnection attempts
    // (tens of seconds) and delay the run's outcome; the lock expires by itself within its TTL.
    if (this.redis.status !== 'ready')
      throw new Error(`the Redis connection is ${this.redis.status}; the lock expires within its TTL`);
    const n = await this.redis.eval(RELEASE, 1, this.prefix + key, token);
    return n === 1;
  }
}
