/**
 * Queue mode, worker role: the two sides of matching child jobs in one process — the provider the
 * aggregations use to hand slices out, and the worker that serves any run's slices (its own
 * included, so one worker process alone still finishes its runs).
 */
import type { RedisOptions } from 'ioredis';
import type { Logger } from '../core/ports/logger';
import { shardQueueName } from './queue-names';
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
}

export interface MatchingShards {
  provider: QueueShardProvider;
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
  return {
    provider,
    close: async () => {
      await worker.close();
      await provider.close();
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
    ...(redisHealth ? { redisHealth } : {}),
  });
}
