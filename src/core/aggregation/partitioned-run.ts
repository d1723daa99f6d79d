/** Whether a run decides its new accounts in partitions (issue 27), and its matcher either way. */
import type { FusionConfig } from '../config/fusion-config';
import type { CoreDeps } from '../core-deps';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import { defaultParallelism, partitionThreadsAllowed } from '../matching/parallel/parallelism';
import type { ShardRun } from '../matching/parallel/shard-provider';
import { plannable } from '../matching/partition-plan';
import type { Logger } from '../ports/logger';
import type { DerivedKeys } from './derived-key';
import { partitionThreadsAvailable } from './partition-thread';
import { PlannedMatcher } from './planned-matcher';
import type { ReviewDecisions } from './review-decisions';

/**
 * The run's matcher: where the run may decide its new accounts in partitions
 * (MatchingParallelism.partitions), one that does (planned-matcher.ts) and falls back on `build`. No
 * partitions where they cannot give the same decisions (the probabilistic model, no mandatory attribute
 * with lossless keys), and where there is one thread or no worker entry (the connector's bundle). Where
 * they apply they take the place of matching child jobs (queue mode) and of the usual matcher's threads.
 * In queue mode (CoreDeps.remotePartitions) they are child jobs that any worker process takes, as many as
 * the slots of the processes serving them or the threads of this one, whichever is more.
 */
export function partitionedRun(
  config: FusionConfig,
  deps: CoreDeps,
  build: () => AsyncMatcher,
  keys: DerivedKeys,
  decisions: ReviewDecisions,
  logger: Logger,
  run: ShardRun,
): AsyncMatcher {
  const { threads, minRecords, memoryLimit, threadCost, partitions } = deps.matchingParallelism ?? defaultParallelism();
  // The run's own thread counts among the threads: it reads, builds the reviews and items.
  const local = Math.floor(threads) - 1;
  const remote = partitions === true ? deps.remotePartitions : undefined;
  const remoteParts = remote?.parts() ?? 0;
  const parts = Math.max(local, remoteParts);
  const eligible =
    partitions === true &&
    config.matching.model !== 'probabilistic' &&
    plannable(config.matching) &&
    parts >= 1 &&
    (remoteParts >= 1 || partitionThreadsAvailable());
  if (!eligible) return build();
  // Remote partitions too: the run's own process must have room for all of them, should it take them
  // over (queue/queue-partition-run.ts); together they hold one copy of the records.
  const partsFor = (records: number): number =>
    memoryLimit === undefined ? parts : Math.min(parts, partitionThreadsAllowed(records, memoryLimit, threadCost));
  const startPartition = deps.startPartition ?? (remoteParts >= 1 ? remote!.forRun({ ...run, logger }) : undefined);
  return new PlannedMatcher({
    settings: config.matching,
    keys,
    build,
    partsFor,
    minRecords,
    skipsMatching: (id) => decisions.skipsMatching(id),
    signal: run.signal,
    logger,
    ...(startPartition ? { startPartition } : {}),
    ...(remoteParts >= 1
      ? { childJobs: 'partitions' as const }
      : deps.matchingShards
        ? { childJobs: 'forgone' as const }
        : {}),
  });
}
