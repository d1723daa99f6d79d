import { registry } from '../../src/observability/metrics-registry';
import { METRIC } from '../../src/observability/metric-names';
// What a `fusion-proxy serve` process loads: the server (api + queue) and the production runner
// (core commands, platform client, matching, review forms), and the worker's matching child jobs.
import '../../src/cli/serve';

describe('metrics', () => {
  it('every metric name the chart, dashboard and alerts rely on is registered by the serving process', async () => {
    const registered = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    const missing = Object.values(METRIC).filter((name) => !registered.has(name));
    expect(missing).toEqual([]);
  });

  it('no metric declares an id-like label (label values must stay bounded)', async () => {
    const forbidden = /(^|_)(id|ids|account|identity|job|request|client|tenant|user|source)$/i;
    const offenders: string[] = [];
    for (const { name } of await registry.getMetricsAsJSON()) {
      const labels = (registry.getSingleMetric(name) as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
      for (const l of labels) if (forbidden.test(l)) offenders.push(`${name}{${l}}`);
    }
    expect(offenders).toEqual([]);
  });

  it('no metric declares a label Prometheus Operator sets on every target (it would be overwritten)', async () => {
    // A ServiceMonitor's relabelings set these; with honor_labels false (its default) the target's value wins.
    const reserved = new Set(['endpoint', 'namespace', 'pod', 'service', 'container', 'job', 'instance']);
    const offenders: string[] = [];
    for (const { name } of await registry.getMetricsAsJSON()) {
      const labels = (registry.getSingleMetric(name) as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
      for (const l of labels) if (reserved.has(l)) offenders.push(`${name}{${l}}`);
    }
    expect(offenders).toEqual([]);
  });
});
