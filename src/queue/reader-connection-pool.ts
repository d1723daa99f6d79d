import { Redis, type RedisOptions } from 'ioredis';

export interface ReaderConnection {
  redis: Redis;
  /** CLIENT ID, so another connection can CLIENT UNBLOCK it. */
  clientId: number;
  /** When it was last handed back healthy (performance.now()). */
  releasedAt?: number;
}

/** How long an idle connection may take to answer PING before it is replaced. */
const HEALTH_CHECK_MS = 500;

/**
 * An idle connection handed back healthy less than this long ago is lent without a PING: its
 * first command on loan (the reader lease, sent before the job on the same connection) answers
 * for it, and a PING would add a round trip before every queued command.
 */
const RECENTLY_USED_MS = 1000;

function pingWithin(redis: Redis, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    redis.ping().then(
      (r) => r === 'PONG',
      () => false,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Blocking reads (XREAD BLOCK) occupy a connection, so each waiting request gets one of its
 * own; idle ones are kept for the next request instead of reconnecting every time. An idle
 * connection is checked (PING) before it is handed out: after a Redis restart the pooled ones
 * are dead, and a request that found out only after its job was queued would answer 503 for a
 * command that then runs.
 */
export class ReaderConnectionPool {
  private readonly idle: ReaderConnection[] = [];
  private readonly all = new Set<Redis>();
  private closed = false;
  private lentOut = 0;

  constructor(
    private readonly url: string,
    private readonly options: RedisOptions = {},
    private readonly maxIdle = 32,
    /** Called once for each connection the pool drops (to release what a user attached to it). */
    private readonly onDiscard: (redis: Redis) => void = () => undefined,
  ) {}

  /** Connections open now, idle or lent (metrics and tests). */
  get size(): number {
    return this.all.size;
  }

  /** Connections handed out and not yet released (tests, fault suite). */
  get lent(): number {
    return this.lentOut;
  }

  /** A connection that answered PING just now, or was used successfully less than a second ago. */
  async acquire(): Promise<ReaderConnection> {
    const conn = await this.connect();
    this.lentOut += 1;
    return conn;
  }

  private async connect(): Promise<ReaderConnection> {
    for (let reused = this.idle.pop(); reused; reused = this.idle.pop()) {
      if (
        reused.redis.status === 'ready' &&
        ((reused.releasedAt !== undefined && performance.now() - reused.releasedAt < RECENTLY_USED_MS) ||
          (await pingWithin(reused.redis, HEALTH_CHECK_MS)))
      )
        return reused;
      this.discard(reused.redis);
    }
    const redis = new Redis(this.url, {
      ...this.options,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy: () => null,
      disconnectTimeout: 200,
    });
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
    this.lentOut -= 1;
    if (!healthy || this.closed || this.idle.length >= this.maxIdle || conn.redis.status !== 'ready') {
      this.discard(conn.redis);
      return;
    }
    conn.releasedAt = performance.now();
    this.idle.push(conn);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    const all = [...this.all];
    this.all.clear();
    for (const r of all) this.onDiscard(r);
    await Promise.all(all.map((r) => r.quit().catch(() => r.disconnect())));
  }

  private discard(redis: Redis): void {
    if (this.all.delete(redis)) this.onDiscard(redis);
    redis.disconnect();
  }
}
