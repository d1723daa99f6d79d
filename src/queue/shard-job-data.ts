/**
 * What a matching child job carries: where its inputs are, nothing else. No configuration, no
 * credentials, no record values (those are in the run's keys, see shard-keys.ts).
 */
import { UnrecoverableError } from 'bullmq';

export interface ShardJobData {
  runId: string;
  /** The call of the run (its new-records key) and this child's part of it (its slice key). */
  call: number;
  part: number;
  /** Baseline chunks the owner had stored when it asked: the slice sees exactly these. */
  chunks: number;
  /** New accounts from..to-1 of the call; with `held`, records from..to-1 of the baseline (no new records). */
  from: number;
  to: number;
  /** Blocks baseline records, each against the records before it (a lean owner's foreseen accounts). */
  held?: true;
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Checks a job's data; malformed data is not retried (another attempt would read the same). */
export function readShardJobData(data: unknown): ShardJobData {
  const d = data as Partial<ShardJobData> | null;
  if (
    !d ||
    typeof d.runId !== 'string' ||
    !/^[A-Za-z0-9-]{1,64}$/.test(d.runId) ||
    ![d.call, d.part, d.chunks, d.from, d.to].every(count) ||
    d.from! > d.to! ||
    (d.held !== undefined && d.held !== true)
  )
    throw new UnrecoverableError('matching child job: malformed job data');
  return d as ShardJobData;
}
