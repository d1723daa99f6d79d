import { Redis, type RedisOptions } from 'ioredis';
import { FusionError, errorMessage, isFusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import type { CommandDispatcher, OutputChunk, ProxyCommand, Readiness } from '../dispatch/command-dispatcher';
import { COMMAND_LANES, laneOf, type CommandLane } from '../dispatch/command-lanes';
import { CommandQueue } from './command-queue';
import type { JobCrypto } from './job-crypto';
import { setQueueStatsSource, type QueueStatsSource } from './metrics';
import { DEFAULT_BULL_PREFIX, DEFAULT_QUEUE_NAME, laneQueueName } from './queue-names';
import { RedisHealth, redisCause } from './redis-health';
import { ReaderConnectionPool, type ReaderConnection } from './reader-connection-pool';
import { READER_RENEW_MS } from './lease-lapse';
import { busyProcessCause, loopStall } from './loop-stall';
import { READER_LEASE_MS, resultKeys, type ResultKeys } from './result-keys';
import { ResultStreamReader } from './result-stream-reader';

export interface QueueDispatcherOptions {
  redisUrl: string;
  /** Credentials and TLS of every connection (see server/redis-settings.ts). */
  redisOptions?: RedisOptions;
  crypto: JobCrypto;
  logger: Logger;
  requestTimeoutMs: number;
  queueName?: string;
  prefix?: string;
  /** Longest single XREAD BLOCK (ms). */
  readerBlockMs?: number;
  /** How long the cancel key lives; a worker polls it much more often than that. */
  cancelTtlMs?: number;
  /** How long a job whose queuing failed keeps being withdrawn while Redis does not answer. */
  withdrawWindowMs?: number;
  /** The process's view of Redis (shared with a worker in the same process); one of its own otherwise. */
  redisHealth?: RedisHealth;
}

/** This process gave up waiting on Redis: Redis was slow, or this process could not read its answer. */
class WaitedTooLong extends Error {
  constructor(
    what: string,
    readonly ms: number,
  ) {
    super(`${what} took longer than ${ms} ms`);
  }
}

/** Why Redis could not be used for this request: this process's own stall when that explains a timeout. */
function causeOf(e: unknown, health: RedisHealth): string {
  const busy = e instanceof WaitedTooLong ? busyProcessCause(e.ms) : undefined;
  return busy ?? health.describe(redisCause(e));
}

function unavailable(e: unknown, health: RedisHealth): FusionError {
  const busy = e instanceof WaitedTooLong ? busyProcessCause(e.ms) : undefined;
  const message = busy
    ? `the job queue could not be used in time: ${busy}. The command did not run; retry, and give the api more CPU if this repeats.`
    : `the job queue is unavailable: ${health.describe(redisCause(e))}. The command did not run; retry once Redis is back.`;
  return new FusionError('QUEUE_UNAVAILABLE', message, {}, { cause: e });
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WaitedTooLong(what, ms)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The queue gauges over both lanes: jobs summed by state, workers of the long lane (every worker serves both). */
class LaneStats implements QueueStatsSource {
  constructor(private readonly queues: Record<CommandLane, CommandQueue>) {}

  async jobCounts(): Promise<Record<string, number>> {
    const all = await Promise.all(COMMAND_LANES.map((l) => this.queues[l].jobCounts()));
    const sum: Record<string, number> = {};
    for (const counts of all) for (const [state, n] of Object.entries(counts)) sum[state] = (sum[state] ?? 0) + n;
    return sum;
  }

  workerCount(): Promise<number> {
    return this.queues.long.workerCount();
  }
}

/** Queue mode: enqueue in BullMQ, stream the worker's output back from the job's Redis stream. */
export class QueueDispatcher implements CommandDispatcher {
  readonly mode = 'queue' as const;
  readonly queueName: string;
  /** Shared, non-blocking connection; fails fast (no offline queue) when Redis is down. */
  private readonly redis: Redis;
  /** One queue per command lane (dispatch/command-lanes.ts), on the shared connection. */
  private readonly queues: Record<CommandLane, CommandQueue>;
  private readonly pool: ReaderConnectionPool;
  /** The queues as seen from each reader connection: a job is added on the connection that then reads its result. */
  private readonly readerQueues = new Map<Redis, Map<CommandLane, CommandQueue>>();
  private readonly cleanups = new Set<Promise<void>>();
  private readonly health: RedisHealth;
  private closing = false;

  constructor(private readonly opts: QueueDispatcherOptions) {
    this.queueName = opts.queueName ?? DEFAULT_QUEUE_NAME;
    // A timeout this process sees under CPU starvation is its own, not Redis': watched to say so.
    loopStall.watch();
    this.redis = new Redis(opts.redisUrl, {
      ...opts.redisOptions,
      // ioredis arms a disconnectTimeout timer even for a socket that never connected; keep it short.
      disconnectTimeout: 200,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.health = opts.redisHealth ?? new RedisHealth(opts.redisUrl, opts.logger);
    this.health.watch(this.redis);
    const queueFor = (lane: CommandLane): CommandQueue => {
      const q = new CommandQueue(this.redis, this.laneName(lane), opts.crypto, opts.prefix ?? DEFAULT_BULL_PREFIX);
      this.health.watch(q.queue);
      return q;
    };
    this.queues = { long: queueFor('long'), quick: queueFor('quick') };
    this.pool = new ReaderConnectionPool(opts.redisUrl, opts.redisOptions, undefined, (redis) => {
      const queues = this.readerQueues.get(redis);
      this.readerQueues.delete(redis);
      // Shared connection: closing the queues leaves the connection to the pool.
      for (const q of queues?.values() ?? []) q.close().catch(() => undefined);
    });
    setQueueStatsSource(new LaneStats(this.queues));
  }

  private laneName(lane: CommandLane): string {
    return laneQueueName(lane, this.queueName);
  }

  /** A lane's queue on a reader connection (BullMQ loads its scripts there once). */
  private queueOn(conn: ReaderConnection, lane: CommandLane): CommandQueue {
    let queues = this.readerQueues.get(conn.redis);
    if (!queues) this.readerQueues.set(conn.redis, (queues = new Map()));
    let queue = queues.get(lane);
    if (!queue) {
      queue = new CommandQueue(
        conn.redis,
        this.laneName(lane),
        this.opts.crypto,
        this.opts.prefix ?? DEFAULT_BULL_PREFIX,
      );
      // Its failures reach the add that met them; an 'error' event without a listener would throw.
      queue.queue.on('error', () => undefined);
      queues.set(lane, queue);
    }
    return queue;
  }

  /**
   * A 503 (QUEUE_UNAVAILABLE) promises the command did not run. The reader lease and the job go
   * out together on the connection that will read the result: one round trip, and Redis runs
   * them in order, so the job never exists without its lease, and an answer for both proves the
   * reader's connection. A job whose lease was not confirmed is withdrawn (cancel key, removal;
   * retried until Redis answers) and a worker never starts a job without its lease. Once the job
   * is queued, a lost reader is QUEUE_RESULT_LOST instead.
   */
  async *dispatch(cmd: ProxyCommand, signal: AbortSignal): AsyncGenerator<OutputChunk> {
    await this.connected();
    const keys = resultKeys(this.queueName, cmd.requestId);
    const lane = laneOf(cmd.type);
    let conn: ReaderConnection;
    try {
      conn = await withTimeout(this.pool.acquire(), 5000, 'connecting a reader');
    } catch (e) {
      throw unavailable(e, this.health);
    }
    let completed = false;
    let healthy = true;
    const job: { queued: 'no' | 'yes' | 'maybe' } = { queued: 'no' };
    // A worker never starts a job whose reader lease is not there; it is renewed while the request is
    // open. Set, not extended: a lease that expired while Redis stalled (paused, a long fork) is back
    // with the first renewal Redis answers, and the worker waits for that renewal (LeaseLapse).
    const lease = setInterval(
      () => void this.redis.set(keys.reader, '1', 'PX', READER_LEASE_MS).catch(() => undefined),
      READER_RENEW_MS,
    );
    try {
      const [leased, added] = await Promise.allSettled([
        withTimeout(conn.redis.set(keys.reader, '1', 'PX', READER_LEASE_MS), 5000, 'taking the reader lease'),
        withTimeout(this.queueOn(conn, lane).add(cmd), 5000, 'adding the job'),
      ]);
      if (leased.status === 'rejected' || added.status === 'rejected') {
        // The add may have reached Redis even though its answer did not reach us.
        job.queued = 'maybe';
        healthy = false;
        throw unavailable(
          added.status === 'rejected' ? added.reason : (leased as PromiseRejectedResult).reason,
          this.health,
        );
      }
      job.queued = 'yes';
      const reader = new ResultStreamReader(conn, this.redis, keys, {
        idleTimeoutMs: this.opts.requestTimeoutMs,
        blockMs: this.opts.readerBlockMs ?? 1000,
        count: 16,
      });
      try {
        yield* reader.read(signal);
      } catch (e) {
        if (!isFusionError(e)) {
          healthy = false;
          throw new FusionError(
            'QUEUE_RESULT_LOST',
            `the command was queued, then its result could not be read from Redis (${errorMessage(e)}); it may have run: check before running it again`,
            {},
            { cause: e },
          );
        }
        throw e;
      }
      completed = true;
    } finally {
      clearInterval(lease);
      this.pool.release(conn, healthy);
      if (job.queued !== 'no')
        this.track(this.cleanUp(this.queues[lane], cmd.requestId, keys, completed, job.queued === 'maybe'));
      else this.redis.del(keys.reader).catch(() => undefined);
    }
  }

  /** close() waits for clean-ups: a shutdown must not leave a started-for-nobody job in the queue. */
  private track(p: Promise<void>): void {
    const cleaning = p.finally(() => this.cleanups.delete(cleaning));
    this.cleanups.add(cleaning);
  }

  /** Fails fast while Redis is known to be down; waits briefly only for a first connection in progress. */
  private async connected(): Promise<void> {
    const status = this.redis.status;
    if (status === 'ready') return;
    if (status === 'connecting' || status === 'connect' || status === 'wait') {
      const ok = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => finish(false), 2000);
        const finish = (v: boolean): void => {
          clearTimeout(timer);
          this.redis.off('ready', onReady);
          this.redis.off('error', onError);
          resolve(v);
        };
        const onReady = (): void => finish(true);
        const onError = (): void => finish(false);
        this.redis.once('ready', onReady);
        this.redis.once('error', onError);
      });
      if (ok) return;
    }
    throw unavailable(new Error(`connection is ${this.redis.status}`), this.health);
  }

  private async cleanUp(
    queue: CommandQueue,
    jobId: string,
    keys: ResultKeys,
    completed: boolean,
    retryUntilReachable: boolean,
  ): Promise<void> {
    // A job whose queuing failed must be withdrawn even if Redis is down right now: try again
    // until it answers (bounded), so the 503 already sent stays true.
    const deadline = Date.now() + (retryUntilReachable ? (this.opts.withdrawWindowMs ?? 60_000) : 0);
    for (let attempt = 0; ; attempt++) {
      try {
        if (!completed) {
          // The worker checks this key before it starts a job and polls it while it runs; a job still waiting is simply
          // removed.
          await this.redis.set(keys.cancel, '1', 'PX', this.opts.cancelTtlMs ?? 5 * 60 * 1000);
          await queue.removeIfWaiting(jobId);
        }
        await this.redis.del(keys.stream, keys.reader);
        return;
      } catch (e) {
        if (Date.now() >= deadline || this.closing) {
          this.opts.logger.warn({ err: errorMessage(e), jobId }, 'could not clean up the job result');
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(1000, 100 * 2 ** attempt)));
      }
    }
  }

  /**
   * Reader connections in use by open requests (tests, fault suite): each returns to the pool when its request ends.
   */
  get readersInUse(): number {
    return this.pool.lent;
  }

  /** Reader connections open now, idle or lent (tests): repeated requests reuse them instead of adding more. */
  get readerConnectionsOpen(): number {
    return this.pool.size;
  }

  async ready(): Promise<Readiness> {
    if (this.redis.status !== 'ready')
      return { ok: false, reason: this.health.describe(`connection is ${this.redis.status}`) };
    try {
      await withTimeout(this.redis.ping(), 1000, 'PING');
      return { ok: true };
    } catch (e) {
      return { ok: false, reason: causeOf(e, this.health) };
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    setQueueStatsSource(undefined);
    await withTimeout(Promise.all([...this.cleanups]), 5000, 'cleaning up jobs').catch(() => undefined);
    this.health.stop();
    await this.pool.close();
    await withTimeout(Promise.all(COMMAND_LANES.map((l) => this.queues[l].close())), 2000, 'closing the queues').catch(
      () => undefined,
    );
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
