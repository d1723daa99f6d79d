/**
 * Queue mode, worker role: the two sides of matching child jobs in one process — the provider the
 * aggregations use to hand slices out, and the worker that serves any run's slices (its own
 * included, so one worker process alone still finishes its runs).
 */
import type { RedisOptions } from 'ioredis';
import type { Logger } from '../core/ports/logger';
import { defaultParallelism } from '../core/matching/parallel/parallelism';
import { partitionQueueName, shardQueueName } from './queue-names';
import { PartitionJobWorker } from './partition-job-worker';
import { QueuePartitionProvider } from './queue-partition-provider';
import { QueueShardProvider } from './queue-shard-provider';
import { ShardJobWorker } from './shard-job-worker';
import type { RedisHealth } from './redis-health';

/** The worker's settings this needs, by their environment names (server/env.ts validates them). */
export interface WorkerShardSettings {
  QUEUE_NAME: string;
  MATCHING_SHARD_JOBS: number | undefined;
  WORKER_CONCURRENCY: number;
  WORKER_LOCK_MS: number;
  WORKER_STALLED_INTERVAL_MS: number;
  MATCHING_THREADS: number | undefined;
}

export interface MatchingShards {
  provider: QueueShardProvider;
  /** Partitions of runs decided in partitions, as child jobs (queue-partition-provider.ts). */
  partitions: QueuePartitionProvider;
  close(): Promise<void>;
}

function startMatchingShards(opts: {
  redisUrl: string;
  redisOptions?: RedisOptions;
  /** The command queue (QUEUE_NAME): the shard queue is named after it. */
  queueName: string;
  logger: Logger;
  /** MATCHING_SHARD_JOBS; unset = one per worker process. */
  shardJobs: number | undefined;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** MATCHING_THREADS; unset = every core. */
  threads?: number | undefined;
  redisHealth?: RedisHealth;
}): MatchingShards {
  const { redisUrl, redisOptions } = opts;
  const queueName = shardQueueName(opts.queueName);
  const provider = new QueueShardProvider({
    redisUrl,
    ...(redisOptions ? { redisOptions } : {}),
    queueName,
    ...(opts.shardJobs !== undefined ? { shardJobs: opts.shardJobs } : {}),
    ...(opts.redisHealth ? { redisHealth: opts.redisHealth } : {}),
  });
  const worker = new ShardJobWorker({
    redisUrl,
    ...(redisOptions ? { redisOptions } : {}),
    queueName,
    logger: opts.logger,
    concurrency: opts.concurrency,
    lockDurationMs: opts.lockDurationMs,
    stalledIntervalMs: opts.stalledIntervalMs,
    ...(opts.redisHealth ? { redisHealth: opts.redisHealth } : {}),
  });
  // A partition is a thread busy for its run's length: as many at once as this process has threads
  // besides the one that runs its commands.
  const slots = Math.max(1, Math.floor(opts.threads ?? defaultParallelism().threads) - 1);
  const partitions = new QueuePartitionProvider({
    redisUrl,
    ...(redisOptions ? { redisOptions } : {}),
    queueName: partitionQueueName(opts.queueName),
    ...(opts.shardJobs !== undefined ? { partitions: opts.shardJobs } : {}),
    slots,
    ...(opts.redisHealth ? { redisHealth: opts.redisHealth } : {}),
  });
  const partitionWorker = new PartitionJobWorker({
    redisUrl,
    ...(redisOptions ? { redisOptions } : {}),
    queueName: partitionQueueName(opts.queueName),
    logger: opts.logger,
    concurrency: slots,
    ...(opts.redisHealth ? { redisHealth: opts.redisHealth } : {}),
  });
  return {
    provider,
    partitions,
    close: async () => {
      // Its partitions first: they are given back, and their runs take them over.
      await partitionWorker.close();
      await worker.close();
      await Promise.all([provider.close(), partitions.close()]);
    },
  };
}

/**
 * What `fusion-proxy serve` starts in a worker: child jobs on the command queue's shard queue, with
 * the worker's own concurrency and lock timings. Anything that must load what a serving worker
 * loads (the metrics tests) calls this, not its own copy of the mapping.
 */
export function startWorkerMatchingShards(
  env: WorkerShardSettings,
  redis: { url: string; options?: RedisOptions },
  logger: Logger,
  /** The process's one view of Redis (shared with the command worker): one outage report. */
  redisHealth?: RedisHealth,
): MatchingShards {
  return startMatchingShards({
    redisUrl: redis.url,
    ...(redis.options ? { redisOptions: redis.options } : {}),
    queueName: env.QUEUE_NAME,
    logger,
    shardJobs: env.MATCHING_SHARD_JOBS,
    concurrency: env.WORKER_CONCURRENCY,
    lockDurationMs: env.WORKER_LOCK_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
    threads: env.MATCHING_THREADS,
    ...(redisHealth ? { redisHealth } : {}),
  });
}
