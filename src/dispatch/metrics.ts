import { Counter, Histogram } from 'prom-client';
import { COMMAND_TYPES } from '../core/command-types';
import { METRIC } from '../observability/metric-names';
import { registry } from '../observability/metrics-registry';

/** Commands run in this process (embedded api or worker), by outcome. */
export const jobsTotal = new Counter({
  name: METRIC.jobs,
  help: 'Commands run, by command and outcome (success | error | cancelled)',
  labelNames: ['command', 'outcome'] as const,
  registers: [registry],
});

export const jobDuration = new Histogram({
  name: METRIC.jobDuration,
  help: 'Duration of commands run in this process, in seconds',
  labelNames: ['command', 'outcome'] as const,
  buckets: [0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 7200],
  registers: [registry],
});

const OUTCOMES = ['success', 'error', 'cancelled'] as const;

/**
 * Series at 0 for every command and outcome, created by the processes that run commands (worker,
 * embedded), so the first failed job is an increase from 0 rather than a series' first sample.
 */
export function initJobSeries(): void {
  for (const command of COMMAND_TYPES)
    for (const outcome of OUTCOMES) {
      jobsTotal.inc({ command, outcome }, 0);
      jobDuration.zero({ command, outcome });
    }
}
