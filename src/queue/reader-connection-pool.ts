import { Redis } from 'ioredis';

export interface ReaderConnection {
  redis: Redis;
  /** CLIENT ID, so another connection can CLIENT UNBLOCK it. */
  clientId: number;
}

/**
 * Blocking reads (XREAD BLOCK) occupy a connection, so each waiting request gets one of its
 * own; idle ones are kept for the next request instead of reconnecting every time.
 */
export class ReaderConnectionPool {
  private readonly idle: ReaderConnection[] = [];
  private readonly all = new Set<Redis>();
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly maxIdle = 32,
  ) {}

  async acquire(): Promise<ReaderConnection> {
    const reused = this.idle.pop();
    if (reused) return reused;
    const redis = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => null, disconnectTimeout: 200 });
    redis.on('error', () => undefined);
    this.all.add(redis);
    try {
      await redis.connect();
      const clientId = Number(await redis.client('ID'));
      return { redis, clientId };
    } catch (e) {
      this.discard(redis);
      throw e;
    }
  }

  release(conn: ReaderConnection, healthy: boolean): void {
    if (!healthy || this.closed || this.idle.length >= this.maxIdle || conn.redis.status !== 'ready') {
      this.discard(conn.redis);
      return;
    }
    this.idle.push(conn);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    await Promise.all([...this.all].map((r) => r.quit().catch(() => r.disconnect())));
    this.all.clear();
  }

  private discard(redis: Redis): void {
    this.all.delete(redis);
    redis.disconnect();
  }
}
