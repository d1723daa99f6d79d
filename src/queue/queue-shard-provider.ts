/**
 * Remote shards for the core in queue mode (worker role): phase 1 of a large run's matching goes to
 * child jobs on the shard queue, which every worker process serves (ShardJobWorker). How many
 * children a call gets: MATCHING_SHARD_JOBS, or by default one per worker process serving the shard
 * queue (serving-workers.ts), so adding worker pods adds slices.
 */
import { Queue, QueueEvents } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { MatchingSettings } from '../core/matching/types';
import type { Shard } from '../core/matching/parallel/shard';
import type { ShardProvider, ShardRun } from '../core/matching/parallel/shard-provider';
import type { ShardJobData } from './shard-job-data';
import { DEFAULT_BULL_PREFIX, shardQueueName } from './queue-names';
import { QueueShardRun } from './queue-shard-run';
import { closeConnection, closeWhileReachable } from './redis-close';
import { ServingWorkers } from './serving-workers';
import type { RedisHealth } from './redis-health';

/** Figures behind them: docs/matching.md, "Child jobs" (bench:scale-out --queue and a batch's costs). */
const SHARD_MIN_RECORDS = 20_000;
const SHARD_MIN_ACCOUNTS = 50;

export interface QueueShardProviderOptions {
  redisUrl: string;
  redisOptions?: RedisOptions;
  prefix?: string;
  /** The shard queue; default shardQueueName() of the default command queue. */
  queueName?: string;
  /** Children per call; unset = the worker processes serving the shard queue. */
  shardJobs?: number;
  /** Upper bound of the default above. */
  maxShardJobs?: number;
  minRecords?: number;
  minAccountsPerShard?: number;
  attempts?: number;
  /** The process's view of Redis: an outage is logged once (then every 60 s), not per reconnect. */
  redisHealth?: RedisHealth;
}

export class QueueShardProvider implements ShardProvider {
  readonly minRecords: number;
  readonly minAccountsPerShard: number;
  private readonly redis: Redis;
  private readonly queue: Queue<ShardJobData>;
  private readonly events: QueueEvents;
  private readonly serving: ServingWorkers;
  /** BullMQ leaves connections it was given open: closed here. */
  private readonly bull: Redis[];

  constructor(private readonly opts: QueueShardProviderOptions) {
    this.minRecords = opts.minRecords ?? SHARD_MIN_RECORDS;
    this.minAccountsPerShard = opts.minAccountsPerShard ?? SHARD_MIN_ACCOUNTS;
    const connection = { ...opts.redisOptions, maxRetriesPerRequest: null, disconnectTimeout: 200 };
    const name = opts.queueName ?? shardQueueName();
    const prefix = opts.prefix ?? DEFAULT_BULL_PREFIX;
    this.redis = new Redis(opts.redisUrl, { ...opts.redisOptions, maxRetriesPerRequest: 3, disconnectTimeout: 200 });
    this.bull = [new Redis(opts.redisUrl, connection), new Redis(opts.redisUrl, connection)];
    this.queue = new Queue<ShardJobData>(name, { connection: this.bull[0]!, prefix });
    // BullMQ adds a 'closing' listener to the queue per child job awaited and removes it when the job
    // ends; a run blocking its accounts ahead awaits dozens at once, and runs share this queue.
    this.queue.setMaxListeners(0);
    // Its own blocking connection: children's completions arrive without polling.
    this.events = new QueueEvents(name, { connection: this.bull[1]!, prefix });
    // Every connection has a listener: ioredis prints a stack trace per reconnect attempt for one without.
    const failed = (e: unknown): void => opts.redisHealth?.failed(e);
    for (const c of [this.redis, ...this.bull]) {
      if (opts.redisHealth) opts.redisHealth.watch(c);
      else c.on('error', failed);
    }
    this.events.on('error', failed);
    this.queue.on('error', failed);
    this.serving = new ServingWorkers(this.queue);
  }

  /** Resolves once completions can be heard (call before the first run). */
  async ready(): Promise<void> {
    await Promise.all([this.events.waitUntilReady(), this.queue.waitUntilReady(), this.serving.refresh()]);
  }

  shards(): number {
    return this.opts.shardJobs ?? Math.min(this.serving.count(), this.opts.maxShardJobs ?? 8);
  }

  forRun(run: ShardRun): (settings: MatchingSettings) => Shard {
    const r = new QueueShardRun(
      { redis: this.redis, queue: this.queue, events: this.events, attempts: this.opts.attempts ?? 3 },
      run,
    );
    return (settings) => r.shard(settings);
  }

  async close(): Promise<void> {
    this.serving.close();
    // Bounded: with Redis away BullMQ's closes never resolve.
    await closeWhileReachable(Promise.allSettled([this.events.close(), this.queue.close()]), this.redis, 5000);
    await Promise.all([this.redis, ...this.bull].map((c) => closeConnection(c)));
  }
}
