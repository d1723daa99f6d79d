/**
 * How many threads matching uses, and from what size: the one place these are decided. The
 * aggregation and `fusion-proxy match` build their matcher here; CoreDeps.matchingParallelism
 * overrides the defaults (tests, and a deployment that wants fewer threads than cores).
 */
import { availableParallelism } from 'node:os';
import { cgroupCpuLimit } from './cpu-limit';
import type { MatcherOptions, MatchingSettings } from '../types';
import { type AsyncMatcher, buildParallelMatcher, MIN_ACCOUNTS_PER_SHARD } from './parallel-matcher';
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
}

/** Break-even: docs/benchmarks.md, "Matching threads" (bench:scale-out and a profile of one batch). */
export const DEFAULT_MIN_RECORDS = 20_000;

/** Every core the process may use: the node's, or fewer under a container CPU limit. */
export function defaultParallelism(cpuLimit: number | undefined = cgroupCpuLimit()): MatchingParallelism {
  const cores = availableParallelism();
  return { threads: cpuLimit === undefined ? cores : Math.min(cores, cpuLimit), minRecords: DEFAULT_MIN_RECORDS };
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
): AsyncMatcher {
  const shards = workerEntryAvailable() ? Math.max(0, Math.floor(parallelism.threads) - 1) : 0;
  return buildParallelMatcher(settings, opts, { shards, startShard: workerShard, minRecords: parallelism.minRecords });
}

/** Whether calls of this many new accounts use the threads at all (smaller ones match in-thread). */
export function callsUseThreads(accountsPerCall: number, parallelism: MatchingParallelism): boolean {
  return parallelism.threads > 1 && accountsPerCall >= MIN_ACCOUNTS_PER_SHARD * 2;
}

/**
 * The matcher of a run whose phase 1 goes to remote shards (child jobs) from the provider's size on;
 * the owner still blocks its own slice and runs phase 2. Close it when the run ends.
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
  });
}

/** Whether calls of this many new accounts use remote shards at all. */
export function callsUseRemoteShards(accountsPerCall: number, provider: ShardProvider): boolean {
  return Math.floor(provider.shards()) > 0 && accountsPerCall >= provider.minAccountsPerShard * 2;
}
