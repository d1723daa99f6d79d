/**
 * Queue mode, worker role: the two sides of matching child jobs in one process — the provider the
 * aggregations use to hand slices out, and the worker that serves any run's slices (its own
 * included, so one worker process alone still finishes its runs).
 */
import type { RedisOptions } from 'ioredis';
import type { Logger } from '../core/ports/logger';
import { shardQueueName } from '../queue/queue-names';
import { QueueShardProvider } from '../queue/queue-shard-provider';
import { ShardJobWorker } from '../queue/shard-job-worker';

export interface MatchingShards {
  provider: QueueShardProvider;
  close(): Promise<void>;
}

export function startMatchingShards(opts: {
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
}): MatchingShards {
  const { redisUrl, redisOptions } = opts;
  const queueName = shardQueueName(opts.queueName);
  const provider = new QueueShardProvider({
    redisUrl,
    ...(redisOptions ? { redisOptions } : {}),
    queueName,
    ...(opts.shardJobs !== undefined ? { shardJobs: opts.shardJobs } : {}),
  });
  const worker = new ShardJobWorker({
    redisUrl,
    ...(redisOptions ? { redisOptions } : {}),
    queueName,
    logger: opts.logger,
    concurrency: opts.concurrency,
    lockDurationMs: opts.lockDurationMs,
    stalledIntervalMs: opts.stalledIntervalMs,
  });
  return {
    provider,
    close: async () => {
      await worker.close();
      await provider.close();
    },
  };
}
