/**
 * When shards (matching threads, child jobs) pay off below minRecords (parallel-matcher.ts). A shard
 * costs its start (a thread up with the matcher's code: 110-140 ms on the 2-core machine, counted
 * about 3 times for a loaded one) and its copy of each record (~50 us, as the owner's own append)
 * before it blocks anything. The records' count alone is the break-even for accounts of usual cost
 * (tens of microseconds); a careless list (nothing mandatory) costs ~20 ms an account at 5k.
 */
const SHARD_START_MS = 500;
const PREPARE_MS_PER_RECORD = 0.05;

/** Whether a call whose owner would block for `blockingMs` gains by starting shards over `records`. */
export function shardsPayOff(blockingMs: number, records: number): boolean {
  return blockingMs > SHARD_START_MS + records * PREPARE_MS_PER_RECORD;
}
