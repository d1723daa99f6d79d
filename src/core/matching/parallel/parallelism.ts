/**
 * How many threads matching uses, and from what size: the one place these are decided. The
 * aggregation and `fusion-proxy match` build their matcher here; CoreDeps.matchingParallelism
 * overrides the defaults (tests, and a deployment that wants fewer threads than cores).
 */
import { availableParallelism } from 'node:os';
import { cgroupCpuLimit } from './cpu-limit';
import { cgroupMemoryLimit } from './memory-limit';
import type { MatcherOptions, MatchingSettings } from '../types';
import type { AsyncMatcher } from './async-matcher';
import { buildParallelMatcher, MIN_ACCOUNTS_PER_SHARD } from './parallel-matcher';
import type { ShardProvider, ShardRun } from './shard-provider';
import { workerEntryAvailable, workerShard } from './worker-shard';

export interface MatchingParallelism {
  /** Threads matching may use, the owner's included; 1: in-thread only. */
  threads: number;
  /**
   * Records (baseline + new accounts) from which the other threads start. Below it a thread costs more
   * than it saves: it prepares its own copy of the baseline before it blocks anything.
   */
  minRecords: number;
  /**
   * Bytes the process may use (the container's memory limit); undefined: no limit. Each further thread
   * holds its own prepared copy of the records, so the limit caps the threads as the records grow.
   */
  memoryLimit?: number;
  /** What each thread costs against memoryLimit; default THREAD_COST (measured). */
  threadCost?: ThreadCost;
  /**
   * Rules runs with a partition plan decide their batches in partitions, one per thread, once they have
   * foreseen `minRecords` records (aggregation/planned-matcher.ts). Off unless the caller asks (the proxy
   * server does by default: MATCHING_PARTITIONS).
   */
  partitions?: boolean;
}

/** Break-even: docs/benchmarks.md, "Matching threads" (bench:scale-out and a profile of one batch). */
export const DEFAULT_MIN_RECORDS = 20_000;

/**
 * What matching threads cost in memory: each further thread holds its own prepared copy of the records
 * (a block-only engine) besides the run's own thread, whose matcher, candidate directory and run state
 * grow with the records too. Peak resident bytes, measured with bench:aggregation-memory --threads on
 * 20,000 and 60,000 identities (docs/benchmarks.md, "Matching threads and the memory limit"): a further
 * thread 600-830 B per record and 55-70 MB of its own; the run's thread 1,100 B (rules) to 2,500 B
 * (probabilistic) per record. Rounded up.
 */
export interface ThreadCost {
  /** Bytes per record of each further thread. */
  perRecord: number;
  /** Bytes of each further thread whatever the records (its isolate, code, young generation). */
  fixed: number;
  /** Bytes per record of the run's own thread. */
  ownerPerRecord: number;
}

export const THREAD_COST: ThreadCost = { perRecord: 1_000, fixed: 64 * 2 ** 20, ownerPerRecord: 2_500 };

/** Share of the memory limit a run plans for: the rest is the process itself and headroom. */
export const PLANNED_SHARE = 0.8;

/**
 * Further threads whose copies of `records` records fit in `memoryLimit` beside the run's own thread
 * (0: in-thread only). Falls as the records grow: a 1 GiB worker pod (the chart's default limit)
 * keeps 9 further threads at 20,000 records, 3 at 100,000, 1 at 200,000 and none from 227,000 on,
 * whatever its node's cores; a 4 GiB pod 19 at 100,000 and 7 at 300,000.
 */
export function threadCopiesAllowed(records: number, memoryLimit: number, cost: ThreadCost = THREAD_COST): number {
  const left = memoryLimit * PLANNED_SHARE - Math.max(0, records) * cost.ownerPerRecord;
  return Math.max(0, Math.floor(left / threadCopyBytes(records, cost)));
}

/**
 * Partition threads that fit in `memoryLimit` beside the run's own thread: together they hold one copy
 * of the `records` (each its partition's share), and each costs its fixed part (0: none fit).
 */
export function partitionThreadsAllowed(records: number, memoryLimit: number, cost: ThreadCost = THREAD_COST): number {
  const left = memoryLimit * PLANNED_SHARE - Math.max(0, records) * (cost.ownerPerRecord + cost.perRecord);
  if (left <= 0) return 0;
  return cost.fixed > 0 ? Math.floor(left / cost.fixed) : Number.POSITIVE_INFINITY;
}

/**
 * Whether a partition that may grow to `bytes` (threadCopyBytes of its records), decided in a thread of
 * this process, fits in `memoryLimit` beside what the process uses now (`usedBytes`: its resident size,
 * and what partitions it took since have yet to grow into). A partition left by a full process is
 * decided by its run's own process, which planned room for all of its partitions (partitionThreadsAllowed).
 */
export function partitionFits(bytes: number, usedBytes: number, memoryLimit: number): boolean {
  return usedBytes + bytes <= memoryLimit * PLANNED_SHARE;
}

/** Bytes of one further thread holding `records` records. */
export function threadCopyBytes(records: number, cost: ThreadCost = THREAD_COST): number {
  return Math.max(0, records) * cost.perRecord + cost.fixed;
}

/** Every core the process may use: the node's, or fewer under a container CPU limit; and its memory limit. */
export function defaultParallelism(
  cpuLimit: number | undefined = cgroupCpuLimit(),
  memoryLimit: number | undefined = cgroupMemoryLimit(),
): MatchingParallelism {
  const cores = availableParallelism();
  return {
    threads: cpuLimit === undefined ? cores : Math.min(cores, cpuLimit),
    minRecords: DEFAULT_MIN_RECORDS,
    ...(memoryLimit !== undefined ? { memoryLimit } : {}),
  };
}

/** What a run is told when its memory limit caps its matching threads. */
export interface ThreadsCapped {
  /** Threads in use from now on, the run's own included. */
  threads: number;
  /** Threads the settings asked for. */
  wanted: number;
  records: number;
  memoryLimit: number;
  /** Bytes of each further thread's copy at this size. */
  threadBytes: number;
}

const mib = (bytes: number): string => Math.round(bytes / 2 ** 20).toLocaleString('en-US');

/** The warning a run logs when its memory limit caps its matching threads. */
export function threadsCappedMessage(c: ThreadsCapped): string {
  return `Matching uses ${c.threads} thread(s) instead of ${c.wanted}: each further thread holds its own copy of the ${c.records.toLocaleString('en-US')} records (about ${mib(c.threadBytes)} MiB each), and this process may use ${mib(c.memoryLimit)} MiB (its container's memory limit). The results are the same; raise the worker's memory limit to use more threads`;
}

/**
 * The matcher of a run: in-thread below minRecords or with one thread; else phase 1 spread over
 * worker threads. Without a worker entry (the connector's bundle) always in-thread. Close it when the
 * run ends.
 */
export function buildRunMatcher(
  settings: MatchingSettings,
  opts: MatcherOptions = {},
  parallelism: MatchingParallelism = defaultParallelism(),
  onThreadsCapped?: (cap: ThreadsCapped) => void,
): AsyncMatcher {
  const shards = workerEntryAvailable() ? Math.max(0, Math.floor(parallelism.threads) - 1) : 0;
  const { memoryLimit, threadCost = THREAD_COST } = parallelism;
  return buildParallelMatcher(settings, opts, {
    shards,
    startShard: workerShard,
    minRecords: parallelism.minRecords,
    ...(memoryLimit !== undefined
      ? {
          maxShards: (records: number) => threadCopiesAllowed(records, memoryLimit, threadCost),
          onShardsCapped: (c: { shards: number; wanted: number; records: number }) =>
            onThreadsCapped?.({
              threads: c.shards + 1,
              wanted: c.wanted + 1,
              records: c.records,
              memoryLimit,
              threadBytes: threadCopyBytes(c.records, threadCost),
            }),
        }
      : {}),
  });
}

/** Whether calls of this many new accounts use the threads at all (smaller ones match in-thread). */
export function callsUseThreads(accountsPerCall: number, parallelism: MatchingParallelism): boolean {
  return parallelism.threads > 1 && accountsPerCall >= MIN_ACCOUNTS_PER_SHARD * 2;
}

/**
 * The matcher of a run whose phase 1 goes to remote shards (child jobs) from the provider's size on.
 * Rules model: the shards block every slice and the owner keeps only ids (a lean owner, see
 * parallel-matcher.ts); probabilistic: the owner blocks its own slice too and runs phase 2 over its
 * records, where the model's state lives. Close it when the run ends.
 */
export function buildRemoteRunMatcher(
  settings: MatchingSettings,
  opts: MatcherOptions,
  provider: ShardProvider,
  run: ShardRun,
): AsyncMatcher {
  return buildParallelMatcher(settings, opts, {
    shards: Math.max(0, Math.floor(provider.shards())),
    startShard: provider.forRun(run),
    minRecords: provider.minRecords,
    minAccountsPerShard: provider.minAccountsPerShard,
    lean: settings.model !== 'probabilistic',
  });
}

/** Whether calls of this many new accounts use remote shards at all. */
export function callsUseRemoteShards(accountsPerCall: number, provider: ShardProvider): boolean {
  return Math.floor(provider.shards()) > 0 && accountsPerCall >= provider.minAccountsPerShard * 2;
}
