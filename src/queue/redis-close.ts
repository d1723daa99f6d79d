/**
 * Closing what talks to Redis without ever waiting on a Redis that does not answer. BullMQ's
 * close() never resolves while Redis is unreachable, and ioredis' quit() waits for a reconnection:
 * a process stopping during an outage (SIGTERM with Redis away) would otherwise never exit.
 */
import type { Redis } from 'ioredis';

const POLL_MS = 50;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/** Resolves once `ok()` is false (checked every 50 ms); never rejects. */
export function whileTrue(ok: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (!ok()) return resolve();
    const timer = setInterval(() => {
      if (ok()) return;
      clearInterval(timer);
      resolve();
    }, POLL_MS);
    timer.unref();
  });
}

/**
 * Waits for `closing` (a BullMQ close) while `redis` is usable, at most `boundMs`; gives up at once
 * when Redis is (or becomes) unusable, since the close cannot finish then. Says which came first.
 */
export async function closeWhileReachable(
  closing: Promise<unknown>,
  redis: Redis,
  boundMs: number,
): Promise<'closed' | 'unreachable' | 'timeout'> {
  const closed = closing.then(
    () => 'closed' as const,
    () => 'closed' as const,
  );
  return Promise.race([
    closed,
    whileTrue(() => redis.status === 'ready').then(() => 'unreachable' as const),
    sleep(boundMs).then(() => 'timeout' as const),
  ]);
}

/** QUIT when connected (bounded), then drop the socket and stop reconnecting. */
export async function closeConnection(redis: Redis, boundMs = 1000): Promise<void> {
  if (redis.status === 'ready') await Promise.race([redis.quit().catch(() => undefined), sleep(boundMs)]);
  redis.disconnect();
}
