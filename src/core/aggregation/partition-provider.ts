/**
 * Partitions in other processes (queue mode: child jobs any worker process takes, issue 27). The
 * runtime supplies a provider through CoreDeps.remotePartitions; core sees only StartPartition, so it
 * stays free of Redis and BullMQ. Embedded mode and the connector's bundle have none and use threads.
 */
import type { ShardRun } from '../matching/parallel/shard-provider';
import type { Logger } from '../ports/logger';
import type { StartPartition } from './partition-thread';

export interface PartitionProvider {
  /** Partitions a run hands out: one per worker process serving them by default (0: none). */
  parts(): number;
  /** The partitions of one run. Nothing is written until the first starts: a run that never partitions pays nothing. */
  forRun(run: PartitionRun): StartPartition;
}

/** The run its partitions serve: its id scopes their keys, its log says where they are decided. */
export interface PartitionRun extends ShardRun {
  logger: Logger;
}
