import { Counter, Histogram } from 'prom-client';
import { METRIC } from '../observability/metric-names';
import { registry } from '../observability/metrics-registry';

export type ShardJobOutcome = 'completed' | 'failed' | 'run_ended';

const jobs = new Counter({
  name: METRIC.shardJobs,
  help: 'Matching child jobs run by this worker, by outcome (run_ended: its run was over, nothing written)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const duration = new Histogram({
  name: METRIC.shardJobDuration,
  help: 'Seconds a matching child job took on this worker (baseline chunks loaded + slice blocked + written)',
  buckets: [0.005, 0.025, 0.1, 0.5, 2, 10, 60, 300],
  registers: [registry],
});

/** Zero series for every outcome, so dashboards and rules see them before the first child job. */
export function initShardJobSeries(): void {
  for (const outcome of ['completed', 'failed', 'run_ended'] as const) jobs.inc({ outcome }, 0);
}

export function recordShardJob(outcome: ShardJobOutcome, seconds: number): void {
  jobs.inc({ outcome });
  duration.observe(seconds);
}
