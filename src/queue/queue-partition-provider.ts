/**
 * Partitions of rules aggregations as child jobs (queue mode, worker role; issue 27): a run decided in
 * partitions hands each partition to a job on the partition queue, which every worker process serves
 * (PartitionJobWorker). How many partitions a run gets: MATCHING_SHARD_JOBS, or by default the slots of
 * the worker processes serving the queue (serving-workers.ts), so adding worker pods adds
 * partitions. While this process alone serves it, a run's partitions are threads of its own instead.
 */
import { Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { PartitionProvider, PartitionRun } from '../core/aggregation/partition-provider';
import { startPartitionThread, type StartPartition } from '../core/aggregation/partition-thread';
import { partitionSpace, type PartitionJobData } from './partition-keys';
import { DEFAULT_BULL_PREFIX, partitionQueueName } from './queue-names';
import { openReader } from './partition-host';
import { initPartitionSeries } from './partition-metrics';
import { QueuePartitionRun } from './queue-partition-run';
import { processReservations, type PartitionReservations } from './partition-reservations';
import { closeConnection, closeWhileReachable } from './redis-close';
import { ServingWorkers } from './serving-workers';
import type { RedisHealth } from './redis-health';

/** A partition's claim lapses this long after its process stops renewing it (a dead worker's). */
export const CLAIM_TTL_MS = 15_000;
/** How often a run takes over partitions nobody holds; the first time, the worker processes' grace to take them. */
const CHECK_MS = 2_000;
/** The most partitions a run gets by default: more cost the run's thread more routing than they save. */
const MAX_PARTITIONS = 32;

export interface QueuePartitionProviderOptions {
  redisUrl: string;
  redisOptions?: RedisOptions;
  prefix?: string;
  /** The partition queue; default partitionQueueName() of the default command queue. */
  queueName?: string;
  /**
   * Partitions per run; unset = the slots of the worker processes serving the partition queue (each
   * process's as many as this one's, `slots`), none while this process alone serves it.
   */
  partitions?: number;
  /** Partitions this process decides at once (PartitionJobWorker's concurrency). */
  slots?: number;
  claimTtlMs?: number;
  checkMs?: number;
  /** How a partition taken over runs in this process; default a thread. */
  startThread?: StartPartition;
  /** Tests: answers lost as failed writes (partition-host.ts). */
  loses?: (part: number, seq: number) => boolean;
  /** What partitions taken over reserve; default the process's one ledger (PartitionJobWorker's too). */
  reservations?: PartitionReservations;
  redisHealth?: RedisHealth;
}

export class QueuePartitionProvider implements PartitionProvider {
  private readonly redis: Redis;
  private readonly bull: Redis;
  private readonly queue: Queue<PartitionJobData>;
  private readonly serving: ServingWorkers;
  private readonly space: string;
  /** Connections of runs' blocking reads: closed by their runs, and here at close. */
  private readonly readers = new Set<Redis>();

  constructor(private readonly opts: QueuePartitionProviderOptions) {
    initPartitionSeries();
    this.redis = new Redis(opts.redisUrl, { ...opts.redisOptions, maxRetriesPerRequest: 3, disconnectTimeout: 200 });
    this.bull = new Redis(opts.redisUrl, { ...opts.redisOptions, maxRetriesPerRequest: null, disconnectTimeout: 200 });
    const name = opts.queueName ?? partitionQueueName();
    const prefix = opts.prefix ?? DEFAULT_BULL_PREFIX;
    this.space = partitionSpace(prefix, name);
    this.queue = new Queue<PartitionJobData>(name, { connection: this.bull, prefix });
    const failed = (e: unknown): void => opts.redisHealth?.failed(e);
    for (const c of [this.redis, this.bull]) {
      if (opts.redisHealth) opts.redisHealth.watch(c);
      else c.on('error', failed);
    }
    this.queue.on('error', failed);
    this.serving = new ServingWorkers(this.queue);
  }

  async ready(): Promise<void> {
    await Promise.all([this.queue.waitUntilReady(), this.serving.refresh()]);
  }

  parts(): number {
    if (this.opts.partitions !== undefined) return this.opts.partitions;
    // This process alone serves them: its own threads decide them without the trip through Redis.
    if (this.serving.count() <= 1) return 0;
    return Math.min(this.serving.count() * (this.opts.slots ?? 1), MAX_PARTITIONS);
  }

  forRun(run: PartitionRun): StartPartition {
    const { opts } = this;
    const r = new QueuePartitionRun(
      {
        redis: this.redis,
        queue: this.queue,
        connect: () => this.connect(),
        startThread: opts.startThread ?? startPartitionThread,
        space: this.space,
        claimTtlMs: opts.claimTtlMs ?? CLAIM_TTL_MS,
        checkMs: opts.checkMs ?? CHECK_MS,
        reservations: opts.reservations ?? processReservations,
        ...(opts.loses ? { loses: opts.loses } : {}),
      },
      run,
    );
    return r.start;
  }

  private connect(): Redis {
    const c = openReader(this.opts.redisUrl, this.opts.redisOptions);
    if (this.opts.redisHealth) this.opts.redisHealth.watch(c);
    else c.on('error', (e: unknown) => this.opts.redisHealth?.failed(e));
    this.readers.add(c);
    c.once('end', () => this.readers.delete(c));
    return c;
  }

  async close(): Promise<void> {
    this.serving.close();
    await closeWhileReachable(this.queue.close(), this.redis, 5000);
    await Promise.all([this.redis, this.bull, ...this.readers].map((c) => closeConnection(c)));
  }
}
