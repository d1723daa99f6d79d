/**
 * What the benches share with the tests (test/support), so both start things one way: free ports,
 * a Redis of their own (stopped with its folder by stop()), connections whose errors stay quiet.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { startOwnRedis } from '../test/support/own-redis';

export { freePort } from '../test/support/free-port';

/**
 * A connection of the bench's own. An ioredis connection without an 'error' listener prints a
 * stack trace for every reconnect attempt once its Redis goes away (at the end of a run, when a
 * child is killed): a bench's output must stay its figures.
 */
export function benchConnection(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, options);
  redis.on('error', () => undefined);
  return redis;
}

export interface BenchRedis {
  url: string;
  /** Its process id, for benches that measure its CPU; undefined for a Redis given by REDIS_URL. */
  pid?: number;
  /** Kills it and removes its folder; a Redis given by REDIS_URL is left alone. */
  stop(): Promise<void>;
}

/** A redis-server of the bench's own on a free port, no persistence, answering PING (test/support/own-redis.ts). */
export async function spawnRedis(): Promise<BenchRedis> {
  const own = await startOwnRedis();
  return { url: own.url, pid: own.pid, stop: () => own.stop() };
}
