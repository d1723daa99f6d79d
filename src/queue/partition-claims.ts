import type { Redis } from 'ioredis';
import type { RunLock } from '../core/ports/run-lock';
import { RedisRunLock } from '../locks/redis-run-lock';

/**
 * A partition's claim is a run lock of its own (a token with a TTL, renewed and released only by its
 * holder), keyed by partitionKeys(space, runId).claim(part): the same token-checked Lua as the run lock.
 */
export function partitionClaims(redis: Redis): RunLock {
  return new RedisRunLock(redis, '');
}
