import { Counter } from 'prom-client';
import { METRIC } from '../observability/metric-names';
import { registry } from '../observability/metrics-registry';
import { HOST_ENDS } from './partition-host';

/**
 * How a partition job ended on this worker: how its host ended; held: another process decided it;
 * no_room: it did not fit in this process's memory limit (its run decides it).
 */
const PARTITION_JOB_OUTCOMES = [...HOST_ENDS, 'held', 'no_room'] as const;
export type PartitionJobOutcome = (typeof PARTITION_JOB_OUTCOMES)[number];

const jobs = new Counter({
  name: METRIC.partitionJobs,
  help: "Partition jobs this worker took, by how they ended (held: another process decided the partition; no_room: it did not fit in this worker's memory limit, its run decided it; run_gone: its run was over; stopped: this worker stopped and gave it back; claim_lost: another took it over)",
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const takeovers = new Counter({
  name: METRIC.partitionTakeovers,
  help: 'Partitions the runs of this process took over and replayed (no worker took the job in time, or the one that did stopped or died)',
  registers: [registry],
});

/** Zero series, so dashboards and rules see them before the first partition. */
export function initPartitionSeries(): void {
  for (const outcome of PARTITION_JOB_OUTCOMES) jobs.inc({ outcome }, 0);
  takeovers.inc(0);
}

export function recordPartitionJob(outcome: PartitionJobOutcome): void {
  jobs.inc({ outcome });
}

export function recordTakeover(): void {
  takeovers.inc();
}
