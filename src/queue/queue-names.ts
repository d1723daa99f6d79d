import type { CommandLane } from '../dispatch/command-lanes';

/** Queue identity shared by the api, the workers, the chart's KEDA trigger and the tests. */
export const DEFAULT_QUEUE_NAME = 'fusion-commands';
export const DEFAULT_BULL_PREFIX = 'bull';

/** The Redis list BullMQ keeps waiting jobs in; one of the two lists KEDA's redis triggers count. */
export function waitListKey(queueName = DEFAULT_QUEUE_NAME, prefix = DEFAULT_BULL_PREFIX): string {
  return `${prefix}:${queueName}:wait`;
}

/**
 * The Redis list of jobs a worker runs now. KEDA counts it too: a running aggregation has no
 * waiting job, and a trigger on the wait list alone would scale its worker away.
 */
export function activeListKey(queueName = DEFAULT_QUEUE_NAME, prefix = DEFAULT_BULL_PREFIX): string {
  return `${prefix}:${queueName}:active`;
}

/**
 * The queue of each command lane (dispatch/command-lanes.ts): the long lane keeps the configured name
 * (what KEDA, dashboards and earlier releases know), the quick lane is named after it. Result streams,
 * cancel keys and reader leases stay keyed by the configured name, whatever the lane.
 */
export function laneQueueName(lane: CommandLane, queueName = DEFAULT_QUEUE_NAME): string {
  return lane === 'long' ? queueName : `${queueName}-quick`;
}

/**
 * Queue of the matching child jobs of large aggregations (queue-shard-provider.ts): beside the
 * command queue, named after it so two releases sharing a Redis never serve each other's children.
 */
export function shardQueueName(queueName = DEFAULT_QUEUE_NAME): string {
  return `${queueName}-shards`;
}

/**
 * Queue of the partitions of aggregations decided in partitions (queue-partition-provider.ts): a job
 * lives as long as its run, so it never takes a slot from a shard child or a command.
 */
export function partitionQueueName(queueName = DEFAULT_QUEUE_NAME): string {
  return `${queueName}-partitions`;
}
