import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis provided by the global setup; every test gets its own key prefix. */
export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url)
    throw new Error('REDIS_URL is not set: the jest global setup provides it (see test/support/global-setup.ts)');
  return url;
}

/** A prefix unique to one test, so parallel test files never share keys or queues. */
export function uniquePrefix(label = 't'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** Opens a connection the caller must close with `quit()`. */
export function openRedis(opts: { maxRetriesPerRequest?: number | null; url?: string } = {}): Redis {
  // `null` is meaningful (BullMQ workers require it), so only an absent option gets the default.
  const maxRetriesPerRequest = opts.maxRetriesPerRequest === undefined ? 1 : opts.maxRetriesPerRequest;
  return new Redis(opts.url ?? redisUrl(), { maxRetriesPerRequest, lazyConnect: false });
}
