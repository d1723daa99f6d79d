/**
 * Redis keys of one run decided in partitions across worker processes (docs/aggregation.md, "Partitions
 * in other worker processes"). The run id is a hash tag: a partition's claim and the run's streams stay
 * in one cluster slot. Every key has a TTL from its first write (streams: refreshed while the run lives;
 * claims: renewed by their hosts), and the run deletes them when it ends.
 */
import { UnrecoverableError } from 'bullmq';

export interface PartitionKeys {
  /** Present while the run lives: a host whose run is gone (its owner died) stops. */
  meta: string;
  /** Stream of what a partition is told, in order (partition-messages.ts): a host replays it from the start. */
  inbound(part: number): string;
  /** Stream of what every partition answers, each message numbered per partition. */
  outbound: string;
  /** Who decides a partition now: a token, expiring unless its host renews it. */
  claim(part: number): string;
}

/** Lifetime of a run's keys without a refresh: a run whose owner died leaves nothing for long. */
export const PARTITION_KEY_TTL_MS = 10 * 60 * 1000;

/**
 * Where a partition queue's runs keep their keys: its BullMQ prefix and name, so that deployments (or
 * tests) sharing one Redis never meet. Braces become `_`: the run id must stay the key's hash tag.
 */
export function partitionSpace(prefix: string, queueName: string): string {
  return `${prefix}:${queueName}`.replace(/[{}]/g, '_');
}

export function partitionKeys(space: string, runId: string): PartitionKeys {
  const base = `fusion:part:${space}:{${runId}}`;
  return {
    meta: `${base}:meta`,
    inbound: (part) => `${base}:in:${part}`,
    outbound: `${base}:out`,
    claim: (part) => `${base}:claim:${part}`,
  };
}

/** What a partition's job carries: where its inputs are, nothing else (no configuration, no records). */
export interface PartitionJobData {
  runId: string;
  part: number;
  /** Baseline records the partition holds: what a worker weighs against its memory limit before it takes it. */
  records: number;
}

/** BullMQ job id of a partition: one job per partition of a run. */
export function partitionJobId(runId: string, part: number): string {
  return `${runId}-p${part}`;
}

/** Checks a job's data; malformed data is not retried (another attempt would read the same). */
export function readPartitionJobData(data: unknown): PartitionJobData {
  const d = data as Partial<PartitionJobData> | null;
  if (
    !d ||
    typeof d.runId !== 'string' ||
    !/^[A-Za-z0-9-]{1,64}$/.test(d.runId) ||
    typeof d.part !== 'number' ||
    !Number.isInteger(d.part) ||
    d.part < 0 ||
    (d.records !== undefined && (typeof d.records !== 'number' || !Number.isInteger(d.records) || d.records < 0))
  )
    throw new UnrecoverableError('partition job: malformed job data');
  // A job queued by an earlier release carries no size: weighed as an empty partition.
  return { runId: d.runId, part: d.part, records: d.records ?? 0 };
}
