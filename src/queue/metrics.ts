import { Gauge } from 'prom-client';
import { METRIC } from '../observability/metric-names';
import { registry } from '../observability/metrics-registry';

/** Source of queue figures for the gauges below; set by the CommandQueue of this process. */
export interface QueueStatsSource {
  jobCounts(): Promise<Record<string, number>>;
  workerCount(): Promise<number>;
}

let statsSource: QueueStatsSource | undefined;

export function setQueueStatsSource(source: QueueStatsSource | undefined): void {
  statsSource = source;
}

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'] as const;

// Both gauges register themselves and read Redis when scraped: nothing else references them.
new Gauge({
  name: METRIC.queueJobs,
  help: 'Jobs in the command queue by state (read from Redis on scrape)',
  labelNames: ['state'] as const,
  registers: [registry],
  async collect() {
    if (!statsSource) return;
    try {
      const counts = await statsSource.jobCounts();
      for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
    } catch {
      // Redis unreachable: keep the last values; /readyz reports the outage.
    }
  },
});

new Gauge({
  name: METRIC.queueWorkers,
  help: 'Workers connected to the command queue (read from Redis on scrape)',
  registers: [registry],
  async collect() {
    if (!statsSource) return;
    try {
      this.set(await statsSource.workerCount());
    } catch {
      // Redis unreachable: as above.
    }
  },
});
