/**
 * Shards outside this process (queue mode: BullMQ child jobs any worker pod takes). The runtime
 * supplies a provider through CoreDeps.matchingShards; core only sees the Shard interface, so it
 * stays free of Redis and BullMQ. Embedded mode and the connector's bundle have none and use threads.
 */
import type { MatchingSettings } from '../types';
import type { Shard } from './shard';

/** The run a set of remote shards serves: its id scopes their keys, its signal cancels their work. */
export interface ShardRun {
  runId: string;
  signal: AbortSignal;
}

export interface ShardProvider {
  /** Remote slices per call besides the owner's; read when the run's matcher is built (0: none). */
  shards(): number;
  /** Records (baseline + new) from which remote shards are used. */
  readonly minRecords: number;
  /** New accounts per slice below which a call stays in-thread (a child job costs a few Redis round trips). */
  readonly minAccountsPerShard: number;
  /** The shard factory of one run; every shard it starts shares the run's stored baseline. */
  forRun(run: ShardRun): (settings: MatchingSettings) => Shard;
}
