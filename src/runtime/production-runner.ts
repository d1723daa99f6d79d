import type { Redis } from 'ioredis';
import type { CommandRunner } from '../core/command-runner';
import { createCoreRunner, type CoreCommandTable } from '../core/core-runner';
import type { CoreDeps } from '../core/core-deps';
import { defaultParallelism } from '../core/matching/parallel/parallelism';
import type { AggregationSummary } from '../core/aggregation/aggregation-summary';
import {
  createAccountCreateCommand,
  createAccountDisableCommand,
  createAccountEnableCommand,
  createAccountListCommand,
  createAccountReadCommand,
  createAccountUpdateCommand,
} from '../core/commands/account-commands';
import { OwnSourceCache } from '../core/aggregation/own-source-cache';
import { createDiscoverSchemaCommand, createEntitlementListCommand } from '../core/commands/schema-commands';
import { createTestConnectionCommand } from '../core/commands/test-connection';
import type { PlatformFactory } from '../core/ports/platform';
import { RecordingReviewQueue } from '../core/ports/review-queue';
import { ReviewFormQueue, reviewSettings } from '../core/review';
import type { RunLock } from '../core/ports/run-lock';
import { MemoryRunLock } from '../locks/memory-run-lock';
import { RedisRunLock } from '../locks/redis-run-lock';
import { ExternalLogSink } from '../observability/external-log-sink';
import { createPlatformFactory } from '../platform/create-platform-client';

/** Shared infrastructure the production runner may use: Redis in queue mode, nothing in embedded mode. */
export interface RuntimeDeps {
  redis?: Redis;
  /** Observers and overrides for tests, the demo and benchmarks; production leaves them unset. */
  onAggregationSummary?: (summary: AggregationSummary) => void;
  platform?: PlatformFactory;
  runLock?: RunLock;
  /** Redis key prefix of run locks and rate-limit buckets (tests use their own). */
  keyPrefix?: string;
  /** Poll period of forced aggregations' tasks (default 2 s). */
  taskPollMs?: number;
  /** Threads one matching may use (MATCHING_THREADS); unset = every core. */
  matchingThreads?: number;
  /**
   * Rules runs decided in partitions (MatchingParallelism.partitions). Off unless asked: the proxy server
   * asks by default (MATCHING_PARTITIONS, env.ts); the connector's bundle has no worker entry for them.
   */
  matchingPartitions?: boolean;
  /** Queue mode, worker role: matching child jobs for large aggregations (see queue/queue-shard-provider.ts). */
  matchingShards?: CoreDeps['matchingShards'];
  /** Queue mode, worker role: partitions as child jobs (see queue/queue-partition-provider.ts). */
  remotePartitions?: CoreDeps['remotePartitions'];
  /** Replaces the review-form lifecycle (benchmarks measure the aggregation alone). */
  reviewQueue?: CoreDeps['reviewQueue'];
  /** The own sources the runner's commands remember (default one of its own; tests pass one to age it). */
  ownSources?: OwnSourceCache;
}

/** The nine commands wired to their ports. */
function createCommandTable(deps: CoreDeps): CoreCommandTable {
  return {
    'std:test-connection': createTestConnectionCommand(deps.platform),
    'std:account:list': createAccountListCommand(deps),
    'std:account:read': createAccountReadCommand(deps),
    'std:account:enable': createAccountEnableCommand(deps),
    'std:account:disable': createAccountDisableCommand(deps),
    'std:account:create': createAccountCreateCommand(deps),
    'std:account:update': createAccountUpdateCommand(deps),
    'std:account:discover-schema': createDiscoverSchemaCommand(deps),
    'std:entitlement:list': createEntitlementListCommand(deps),
  };
}

/**
 * The CommandRunner wired to the connector core, used by `fusion-proxy serve` and the SDK connector.
 * With Redis (queue mode) the run lock and the rate-limit buckets are shared by every worker
 * through Redis; without it (embedded mode) they live in this process.
 */
export function createProductionRunner(deps: RuntimeDeps = {}): CommandRunner {
  const prefix = deps.keyPrefix ?? '';
  const core: CoreDeps = {
    platform:
      deps.platform ??
      createPlatformFactory({ redis: deps.redis, ...(deps.keyPrefix ? { keyPrefix: deps.keyPrefix } : {}) }),
    runLock:
      deps.runLock ?? (deps.redis ? new RedisRunLock(deps.redis, `${prefix}fusion:run-lock:`) : new MemoryRunLock()),
    externalLogSink: (url) => new ExternalLogSink(url),
    ownSources: deps.ownSources ?? new OwnSourceCache(),
    // The review-form lifecycle on the platform's custom forms (docs/review-forms.md).
    reviewQueue:
      deps.reviewQueue ??
      (({ config, ctx, platform, own }) =>
        platform.reviews
          ? new ReviewFormQueue({
              review: platform.reviews(),
              platform,
              fusionSource: own,
              ...reviewSettings(config),
              logger: ctx.logger,
              signal: ctx.signal,
            })
          : new RecordingReviewQueue()),
    ...(deps.onAggregationSummary ? { onAggregationSummary: deps.onAggregationSummary } : {}),
    ...(deps.taskPollMs ? { taskPollMs: deps.taskPollMs } : {}),
    ...(deps.matchingThreads || deps.matchingPartitions
      ? {
          matchingParallelism: {
            ...defaultParallelism(),
            ...(deps.matchingThreads ? { threads: deps.matchingThreads } : {}),
            ...(deps.matchingPartitions ? { partitions: true } : {}),
          },
        }
      : {}),
    ...(deps.matchingShards ? { matchingShards: deps.matchingShards } : {}),
    ...(deps.remotePartitions ? { remotePartitions: deps.remotePartitions } : {}),
  };
  return createCoreRunner(createCommandTable(core));
}
