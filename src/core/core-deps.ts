import type { CommandContext } from './command-runner';
import type { FusionConfig } from './config/fusion-config';
import type { LogSink } from './ports/log-sink';
import type { PlatformFactory, PlatformSession, PlatformSource } from './ports/platform';
import type { ReviewQueue } from './ports/review-queue';
import type { RunLock } from './ports/run-lock';
import type { AggregationSummary } from './aggregation/aggregation-summary';
import type { MatchingParallelism } from './matching/parallel/parallelism';
import type { ShardProvider } from './matching/parallel/shard-provider';
import type { StartPartition } from './aggregation/partition-thread';
import type { PartitionProvider } from './aggregation/partition-provider';
import type { OwnSourceCache } from './aggregation/own-source-cache';

/** What the core commands get from the runtime: ports and factories, never concrete clients. */
export interface CoreDeps {
  /** The platform session of one command (rate limits, retries and paging live behind it). */
  platform: PlatformFactory;
  /** Shared by every run of this process (embedded) or every worker (Redis). */
  runLock: RunLock;
  /**
   * The own source's id from the last listing, so a single-account command skips the listing; unset = every
   * command lists the sources. The production runner keeps one for all its commands.
   */
  ownSources?: OwnSourceCache;
  /**
   * The review queue of one aggregation run (the review-form lifecycle in production). Defaults to
   * a RecordingReviewQueue per run (pending reviews in the run summary only).
   */
  reviewQueue?: (args: {
    config: FusionConfig;
    ctx: CommandContext;
    platform: PlatformSession;
    own: PlatformSource;
  }) => ReviewQueue;
  /** The "External logging URL" sender; undefined = external logging unavailable in this build. */
  externalLogSink?: (url: string) => LogSink;
  /** Called once per finished aggregation (demo, metrics, tests). */
  onAggregationSummary?: (summary: AggregationSummary) => void;
  /** Run lock TTL; renewed every third of it while the run lives. Default 60 s. */
  lockTtlMs?: number;
  /** How long std:account:create waits for another create holding the source's lock. Default 10 s. */
  createLockWaitMs?: number;
  /** Poll period of a forced aggregation's task. Default 2 s. */
  taskPollMs?: number;
  now?: () => Date;
  /** Matching threads and the size from which they start; default defaultParallelism() (every core). */
  matchingParallelism?: MatchingParallelism;
  /**
   * Shards in other processes (queue mode, worker role: child jobs any worker takes). When set, an
   * aggregation whose calls are large enough spreads phase 1 of matching over them instead of threads.
   */
  matchingShards?: ShardProvider;
  /** Starts a partition of a rules aggregation decided in partitions; default a thread (partition-thread.ts). */
  startPartition?: StartPartition;
  /**
   * Partitions in other processes (queue mode, worker role): a run decided in partitions hands them to
   * child jobs that any worker process takes, instead of threads of its own process.
   */
  remotePartitions?: PartitionProvider;
}
