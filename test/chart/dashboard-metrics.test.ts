import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { METRIC } from '../../src/observability/metric-names';
import { CHART_DIR, at, find, render } from './support/helm';
import { baseMetric, metricNames } from './support/promql-metrics';

const KNOWN = new Set<string>(Object.values(METRIC));
// Default process metrics: src/observability/metrics-registry.ts registers them with this prefix.
const PROCESS_PREFIX = 'fusion_process_';
/** Series Prometheus writes itself for every target (the FusionProxyDown alert reads `up`). */
const PROMETHEUS_SERIES = new Set(['up']);

interface Panel {
  type: string;
  title: string;
  description?: string;
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}

function dashboard(): { panels: Panel[]; templating: { list: Array<{ query?: unknown; definition?: string }> } } {
  return JSON.parse(readFileSync(path.join(CHART_DIR, 'dashboards/fusion-proxy.json'), 'utf8'));
}

function dashboardExprs(): string[] {
  const d = dashboard();
  const panels = d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  for (const v of d.templating.list) {
    if (typeof v.definition === 'string') exprs.push(v.definition);
    const q = v.query as { query?: string } | string | undefined;
    if (typeof q === 'object' && typeof q.query === 'string') exprs.push(q.query);
  }
  return exprs;
}

function ruleExprs(): string[] {
  const r = render({ valuesFiles: ['monitoring-values.yaml'] });
  const rule = find(r.objects, 'PrometheusRule', 'fp-fusion-proxy');
  return at<Array<{ rules: Array<{ expr: string }> }>>(rule, 'spec', 'groups').flatMap((g) =>
    g.rules.map((x) => x.expr),
  );
}

async function processMetricNames(): Promise<Set<string>> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PROCESS_PREFIX });
  const metrics = await registry.getMetricsAsJSON();
  registry.clear();
  return new Set(metrics.map((m) => m.name));
}

describe('metrics used by the dashboard and the alerts', () => {
  it('the scanner finds metric names and ignores functions, labels, keywords and variables', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, command) (rate(fusion_job_duration_seconds_bucket{namespace=~"$namespace",state="x"}[$__rate_interval]))) / on() group_left(pod) max(other_metric) > 1e-9',
      ),
    ).toEqual(['fusion_job_duration_seconds_bucket', 'other_metric']);
    expect(
      metricNames('label_values(fusion_process_process_start_time_seconds{namespace=~"$namespace"}, job)'),
    ).toEqual(['fusion_process_process_start_time_seconds']);
    expect(baseMetric('fusion_job_duration_seconds_count', KNOWN)).toBe('fusion_job_duration_seconds');
    expect(baseMetric('fusion_jobs_total', KNOWN)).toBe('fusion_jobs_total');
  });

  it('are all declared in METRIC (src/observability/metric-names.ts), default process metrics or the up series of Prometheus', async () => {
    const processNames = await processMetricNames();
    const exprs = [...dashboardExprs(), ...ruleExprs()];
    expect(exprs.length).toBeGreaterThan(20);
    const unknown = new Set<string>();
    for (const expr of exprs) {
      for (const name of metricNames(expr)) {
        const base = baseMetric(name, KNOWN);
        if (KNOWN.has(base)) continue;
        if (name.startsWith(PROCESS_PREFIX) && processNames.has(name)) continue;
        if (PROMETHEUS_SERIES.has(name)) continue;
        unknown.add(name);
      }
    }
    expect([...unknown]).toEqual([]);
  });

  it('the dashboard plots what the issue lists', () => {
    const used = new Set(dashboardExprs().flatMap((e) => metricNames(e).map((n) => baseMetric(n, KNOWN))));
    for (const m of [
      METRIC.platformRequests,
      METRIC.platform429,
      METRIC.rateLimiterWait,
      METRIC.rateLimitConfiguredRps,
      METRIC.queueJobs,
      METRIC.jobDuration,
      METRIC.activeStreams,
      METRIC.streamBytes,
      METRIC.errors,
      METRIC.queueWorkers,
      METRIC.httpRequests,
    ]) {
      expect(used).toContain(m);
    }
  });

  it('every dashboard panel has a description, a unit and the datasource variable', () => {
    const d = dashboard();
    const panels = d.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThanOrEqual(15);
    for (const p of panels) {
      expect(p.description).toBeTruthy();
      expect(p.fieldConfig?.defaults?.unit).toBeTruthy();
      expect(JSON.stringify(p)).toContain('${datasource}');
    }
  });
});
