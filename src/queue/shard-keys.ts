/**
 * Redis keys of one sharded run (docs/matching.md, "Child jobs"). The run id is a hash tag so the
 * result script, which reads the run's meta key and writes a slice key, stays in one cluster slot.
 * Every key has a TTL (SHARD_KEY_TTL_MS) and the run deletes them when it ends.
 */
export interface ShardKeys {
  /** The matching settings (JSON); absent = the run ended: children do no work and write nothing. */
  meta: string;
  /** List of baseline record columns, binary, in the order of the owner's addBaseline calls. */
  baseline: string;
  /** List of record numbers (binary) no child scores as a candidate again: held accounts sent to review. */
  excluded: string;
  /** One call's new records (binary columns). */
  newRecords(call: number): string;
  /** One child's blocked slice (binary). */
  slice(call: number, part: number): string;
}

/** Lifetime of a run's keys, refreshed at every call: a run whose owner died leaves nothing for long. */
export const SHARD_KEY_TTL_MS = 30 * 60 * 1000;

export function shardKeys(runId: string): ShardKeys {
  const base = `fusion:shard:{${runId}}`;
  return {
    meta: `${base}:meta`,
    baseline: `${base}:baseline`,
    excluded: `${base}:excluded`,
    newRecords: (call) => `${base}:new:${call}`,
    slice: (call, part) => `${base}:slice:${call}:${part}`,
  };
}

/** BullMQ job id of a child: the same for every attempt, so a retry writes the same slice key. */
export function shardJobId(runId: string, call: number, part: number): string {
  return `${runId}-${call}-${part}`;
}
