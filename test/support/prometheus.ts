/**
 * A real Prometheus (Debian's /usr/bin/prometheus; .ci/run installs it) on a free loopback port
 * with its own temporary storage, scraping the given targets every second. For tests that check
 * what the dashboard and the alerts read, as an operator's Prometheus would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './free-port';
import { scaled } from './time-factor';

const PROMETHEUS_BIN = '/usr/bin/prometheus';

export interface ScrapeTarget {
  job: string;
  address: string;
  labels: Record<string, string>;
}

/**
 * The target labels Prometheus Operator gives every target of a ServiceMonitor endpoint (its
 * relabelings: `job` is the service's name, `endpoint` the port's name), so a test scrapes as a
 * cluster's Prometheus does: a metric label of one of these names is overwritten (honor_labels false).
 */
export function operatorTarget(opts: {
  service: string;
  pod: string;
  namespace: string;
  address: string;
  port?: string;
  container?: string;
}): ScrapeTarget {
  return {
    job: opts.service,
    address: opts.address,
    labels: {
      namespace: opts.namespace,
      service: opts.service,
      pod: opts.pod,
      container: opts.container ?? 'fusion-proxy',
      endpoint: opts.port ?? 'metrics',
      instance: opts.address,
    },
  };
}

export interface PromVector {
  metric: Record<string, string>;
  value: [number, string];
}

export class Prometheus {
  private child!: ChildProcess;
  private dir!: string;
  private readonly output: string[] = [];
  url = '';

  static async start(targets: ScrapeTarget[]): Promise<Prometheus> {
    const p = new Prometheus();
    p.dir = mkdtempSync(path.join(tmpdir(), 'fusion-prometheus-'));
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
      // One scrape config per job (Prometheus refuses two of the same name), each target with its labels.
      scrape_configs: [...new Set(targets.map((t) => t.job))].map((job) => ({
        job_name: job,
        // Prometheus Operator's setting for a ServiceMonitor (its default): on a clash, the target's label wins.
        honor_labels: false,
        static_configs: targets.filter((t) => t.job === job).map((t) => ({ targets: [t.address], labels: t.labels })),
      })),
    };
    writeFileSync(path.join(p.dir, 'prometheus.yml'), stringify(config));
    const port = await freePort();
    p.url = `http://127.0.0.1:${port}`;
    p.child = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${path.join(p.dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(p.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--storage.tsdb.retention.time=1h',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    p.child.on('error', (e) => p.output.push(String(e)));
    p.child.stdout!.on('data', (d: Buffer) => p.output.push(d.toString()));
    p.child.stderr!.on('data', (d: Buffer) => p.output.push(d.toString()));
    try {
      await p.ready();
      return p;
    } catch (e) {
      await p.stop();
      throw e;
    }
  }

  private async ready(): Promise<void> {
    const end = Date.now() + scaled(60_000);
    for (;;) {
      if (this.child.exitCode !== null) throw new Error(`prometheus exited: ${this.output.join('').slice(-2000)}`);
      try {
        if ((await fetch(`${this.url}/-/ready`)).status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error(`prometheus not ready: ${this.output.join('').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async api<T>(pathAndQuery: string): Promise<T> {
    const res = await fetch(`${this.url}${pathAndQuery}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error}`);
    return body.data;
  }

  /** An instant query at `time` (seconds), as Grafana's instant queries and the alerts run. */
  async query(expr: string, time?: number): Promise<PromVector[]> {
    const q = new URLSearchParams({ query: expr, ...(time !== undefined ? { time: String(time) } : {}) });
    const data = await this.api<{ resultType: string; result: PromVector[] | [number, string] }>(
      `/api/v1/query?${q.toString()}`,
    );
    if (data.resultType === 'scalar') return [{ metric: {}, value: data.result as [number, string] }];
    return data.result as PromVector[];
  }

  /** The raw samples of a range selector (`metric[5m]`) at `time`. */
  async queryRange(
    expr: string,
    time: number,
  ): Promise<Array<{ metric: Record<string, string>; values: Array<[number, string]> }>> {
    const q = new URLSearchParams({ query: expr, time: String(time) });
    const data = await this.api<{ result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> }>(
      `/api/v1/query?${q.toString()}`,
    );
    return data.result;
  }

  /** Grafana's label_values(selector, label). */
  async labelValues(selector: string, label: string): Promise<string[]> {
    const q = new URLSearchParams({ 'match[]': selector });
    return this.api<string[]>(`/api/v1/label/${label}/values?${q.toString()}`);
  }

  /** Resolves once every target has been scraped (successfully) after `afterSeconds`. */
  async scrapedAfter(afterSeconds: number, targets: number): Promise<void> {
    const end = Date.now() + scaled(60_000);
    for (;;) {
      // timestamp() of a bare selector is the scrape's time (of an expression, it would be the query's).
      const [up, at] = await Promise.all([this.query('up'), this.query('timestamp(up)')]);
      const fresh = at.filter((v) => Number(v.value[1]) > afterSeconds).length;
      if (fresh === targets && up.length === targets && up.every((v) => v.value[1] === '1')) return;
      if (Date.now() > end) throw new Error(`targets not scraped after ${afterSeconds}: ${JSON.stringify(at)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
