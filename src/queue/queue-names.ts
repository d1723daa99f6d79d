/** Queue identity shared by the api, the workers, the chart's KEDA trigger and the tests. */
export const DEFAULT_QUEUE_NAME = 'fusion-commands';
export const DEFAULT_BULL_PREFIX = 'bull';

/** The Redis list BullMQ keeps waiting jobs in; KEDA's redis list trigger watches it. */
export function waitListKey(queueName = DEFAULT_QUEUE_NAME, prefix = DEFAULT_BULL_PREFIX): string {
  return `${prefix}:${queueName}:wait`;
}
