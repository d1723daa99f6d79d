/**
 * #14 item 3: a real Prometheus scrapes a queue-mode deployment (real api and worker processes at
 * the chart's settings, their own Redis, the simulator) while it runs commands that include a
 * rare failure, a throttled tenant and wrong passwords; then every query of the Grafana dashboard
 * is evaluated by that Prometheus and compared with what the run produced, read from the processes'
 * own /metrics before and after. No durations are assumed: the test waits for scrapes.
 *
 * A `rate(x[$__rate_interval])` query is evaluated with the interval set to the whole run, W, so
 * that its value times W is the increase over the run: at least the events counted, and at most
 * that times Prometheus' extrapolation to the window edges (one scrape interval at each end).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { isFusionError } from '../../src/core/errors';
import { proxyItems } from '../../src/proxy-client';
import { limiterLabel } from '../../src/platform/metrics';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { Prometheus, operatorTarget, type PromVector } from '../support/prometheus';
import { parsePromText, type Sample } from '../support/prom-text';
import { Proc } from '../support/serve-process';
import { CHART_DIR } from './support/helm';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(240_000));

const NAMESPACE = 'fusion';
const API_JOB = 'fp-fusion-proxy-api-metrics';
const WORKER_JOB = 'fp-fusion-proxy-worker';
const PASSWORD = 'dashboard-proxy-password-9f8e7d6c';
const THROTTLED = { clientId: 'throttled-tenant-client', clientSecret: 'throttled-tenant-secret-0123456789' };
const SCENARIO = { platform429: 3, wrongPasswords: 3, failedAggregations: 1 };

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string; refId: string }>;
}

const dashboard = JSON.parse(readFileSync(path.join(CHART_DIR, 'dashboards/fusion-proxy.json'), 'utf8')) as {
  panels: Panel[];
  templating: { list: Array<{ name: string; definition?: string }> };
};

describe('the Grafana dashboard against a real Prometheus scraping a queue-mode deployment', () => {
  let redis: OwnRedis;
  let sim: RunningSimulator;
  let api: Proc;
  let worker: Proc;
  let prom: Prometheus;
  let control: Redis;
  const metricsPort: Record<string, number> = {};
  let before: Sample[] = [];
  let after: Sample[] = [];
  let tStart = 0;
  let tEnd = 0;
  let failureCode = '';
  /** The largest factor by which Prometheus' rate() can extrapolate the run's increase (see expectIncrease). */
  let maxExtrapolation = 1;
  const limiters = { normal: '', throttled: '' };
  const figures: string[] = [];

  const config = (
    client: { clientId: string; clientSecret: string },
    rps: number,
    extra = {},
  ): Record<string, unknown> => ({
    baseurl: sim.baseurl,
    ...client,
    spConnectorInstanceId: sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes.spConnectorInstanceId,
    sources: ['Contractors', 'LDAP', 'Legacy'],
    requestsPerSecond: rps,
    maxConcurrentRequests: 4,
    ...extra,
  });
  const run = async (
    type: 'std:account:list' | 'std:test-connection',
    cfg: Record<string, unknown>,
    password = PASSWORD,
  ): Promise<number> => {
    let n = 0;
    for await (const _ of proxyItems({ url: `${api.url}/`, password, type, input: {}, config: cfg })) n++;
    return n;
  };
  const scrapeProcesses = async (): Promise<Sample[]> => {
    const out: Sample[] = [];
    for (const p of [api, worker]) {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort[p.name]}/metrics`)).text();
      out.push(...parsePromText(text));
    }
    return out;
  };
  const now = (): number => Date.now() / 1000;
  const total = (samples: Sample[], name: string, match: Record<string, string> = {}): number =>
    samples
      .filter((x) => x.name === name && Object.entries(match).every(([k, v]) => x.labels[k] === v))
      .reduce((a, x) => a + x.value, 0);
  /** Waits until the processes have counted this many answered proxy requests and finished jobs. */
  const settled = async (want: { http: number; jobs: number }): Promise<void> => {
    const end = Date.now() + scaled(60_000);
    for (;;) {
      const s = await scrapeProcesses();
      const got = {
        http: total(s, 'fusion_http_requests_total'),
        jobs: total(s, 'fusion_jobs_total'),
      };
      if (got.http === want.http && got.jobs === want.jobs) return;
      if (Date.now() > end)
        throw new Error(`processes counted ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    redis = await startOwnRedis();
    control = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    sim = await startSimulator({
      seed: 29,
      tenant: { identities: 200, accountsPerSource: 150, machineRate: 0.02 },
      rateLimit: false,
      logRequests: false,
      clients: [{ ...THROTTLED, scopes: ['sp:scopes:all'] }],
    });
    const common = { REDIS_URL: redis.url, JOB_ENCRYPTION_KEY: 'e'.repeat(64) };
    for (const name of ['api', 'worker']) metricsPort[name] = await freePort();
    api = new Proc('api', 'api', await freePort(), {
      ...common,
      ROLE: 'api',
      PROXY_PASSWORD: PASSWORD,
      METRICS_PORT: String(metricsPort.api),
    });
    worker = new Proc('worker', 'worker', await freePort(), {
      ...common,
      ROLE: 'worker',
      METRICS_PORT: String(metricsPort.worker),
    });
    await Promise.all([api.start(), worker.start()]);
    // Scraped as Prometheus Operator scrapes the chart's ServiceMonitor: its target labels (endpoint,
    // namespace, pod, service, job, instance) override any metric label of the same name.
    prom = await Prometheus.start([
      operatorTarget({
        service: API_JOB,
        pod: 'fp-api-0',
        namespace: NAMESPACE,
        address: `127.0.0.1:${metricsPort.api}`,
      }),
      operatorTarget({
        service: WORKER_JOB,
        pod: 'fp-worker-0',
        namespace: NAMESPACE,
        address: `127.0.0.1:${metricsPort.worker}`,
      }),
    ]);

    // Both tenants' limiter keys exist before the window: their series are then scraped at their
    // starting values, as on a pod that served them before.
    expect(
      await run('std:test-connection', config({ clientId: sim.clientId, clientSecret: sim.clientSecret }, 40)),
    ).toBe(1);
    expect(await run('std:test-connection', config(THROTTLED, 10))).toBe(1);
    const host = new URL(sim.baseurl).host;
    limiters.normal = limiterLabel(host, sim.clientId);
    limiters.throttled = limiterLabel(host, THROTTLED.clientId);

    // Quiet once the processes have counted both commands (a response's count can land just after the
    // client read its end): what they say now is what Prometheus scrapes next.
    await settled({ http: 2, jobs: 2 });
    before = await scrapeProcesses();
    tStart = now();
    await prom.scrapedAfter(tStart, 2);

    // The run: a normal aggregation, a throttled tenant's (three 429s, retried), a rare failure, wrong passwords.
    figures.push(
      `normal aggregation: ${await run('std:account:list', config({ clientId: sim.clientId, clientSecret: sim.clientSecret }, 40))} items`,
    );
    sim.control.injectFault({
      method: 'GET',
      pathTemplate: '/v3/accounts',
      status: 429,
      retryAfter: '0',
      times: SCENARIO.platform429,
    });
    figures.push(`throttled tenant aggregation: ${await run('std:account:list', config(THROTTLED, 10))} items`);
    await run(
      'std:account:list',
      config({ clientId: sim.clientId, clientSecret: sim.clientSecret }, 40, { sources: ['No Such Source'] }),
    ).then(
      () => {
        throw new Error('the aggregation of a missing source succeeded');
      },
      (e: unknown) => {
        failureCode = isFusionError(e) ? e.code : 'UNKNOWN';
      },
    );
    for (let i = 0; i < SCENARIO.wrongPasswords; i++)
      await expect(run('std:test-connection', config(THROTTLED, 10), 'wrong-password-0000000000')).rejects.toThrow(
        /401/,
      );

    // 2 + 3 aggregations + 3 wrong passwords answered; 2 + 3 jobs run (a refused password runs none).
    await settled({ http: 8, jobs: 5 });
    const done = now();
    // Nothing that the checks read changes any more (the queue is empty, no command runs).
    expect(await control.llen('bull:fusion-commands:active')).toBe(0);
    after = await scrapeProcesses();
    // Queries are evaluated at a time whose latest samples were scraped after the run.
    await prom.scrapedAfter(Math.max(done, now()), 2);
    tEnd = now();
    for (const job of [API_JOB, WORKER_JOB]) {
      const [series] = await prom.queryRange(`up{job="${job}"}[${Math.floor(W() * 1000)}ms]`, tEnd);
      const ts = series!.values.map(([t]) => t);
      const sampled = ts[ts.length - 1]! - ts[0]!;
      const average = sampled / (ts.length - 1);
      maxExtrapolation = Math.max(maxExtrapolation, (sampled + 2 * 1.1 * average) / sampled);
    }
  });

  afterAll(async () => {
    await prom?.stop();
    await Promise.all([api, worker].map((p) => p?.kill('SIGKILL').catch(() => undefined)));
    control?.disconnect();
    await sim?.close();
    await redis?.stop();
  });

  // ---- what the run produced, from the processes themselves -------------------------------------

  const sumBy = (
    samples: Sample[],
    name: string,
    by: string[],
    match: Record<string, string> = {},
  ): Map<string, number> => {
    const m = new Map<string, number>();
    for (const s of samples) {
      if (s.name !== name || !Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
      const key = by.map((b) => s.labels[b] ?? '').join('|');
      m.set(key, (m.get(key) ?? 0) + s.value);
    }
    return m;
  };
  /** Increase over the run by the given labels. */
  const produced = (name: string, by: string[], match: Record<string, string> = {}): Map<string, number> => {
    const a = sumBy(after, name, by, match);
    const b = sumBy(before, name, by, match);
    return new Map([...a].map(([k, v]) => [k, v - (b.get(k) ?? 0)]));
  };

  // ---- evaluating a dashboard query as Grafana sends it --------------------------------------------

  const W = (): number => tEnd - tStart;
  const substitute = (expr: string): string =>
    expr
      .replace(/\$namespace/g, NAMESPACE)
      .replace(/\$job/g, '.*')
      .replace(/\$__rate_interval/g, `${Math.floor(W() * 1000)}ms`);
  const evaluate = async (expr: string): Promise<PromVector[]> => prom.query(substitute(expr), tEnd);
  const keyOf = (v: PromVector, by: string[]): string => by.map((b) => v.metric[b] ?? '').join('|');

  /**
   * A rate query over the run, times W, against the increase the processes counted: at least that
   * (Prometheus extrapolates to the window's edges, never less), at most that times the largest
   * extrapolation the scrapes allow (up to 1.1 scrape intervals at each edge, from their timestamps).
   */
  const expectIncrease = (got: PromVector[], by: string[], want: Map<string, number>, label: string): void => {
    const gotBy = new Map(got.map((v) => [keyOf(v, by), Number(v.value[1]) * W()]));
    for (const [k, n] of want) {
      const g = gotBy.get(k);
      if (g === undefined) throw new Error(`${label}: no series ${k} (want ${n})`);
      if (!(g >= n - 1e-6 && g <= n * maxExtrapolation + 1e-6))
        throw new Error(`${label}: ${k} reads ${g.toFixed(3)} over the run, the run produced ${n}`);
    }
    expect([...gotBy].filter(([k, g]) => !want.has(k) && g !== 0)).toEqual([]);
    const shown = [...want].filter(([, n]) => n > 0);
    figures.push(
      `${label}: ${shown.map(([k, n]) => `${k || 'total'}=${n} (reads ${gotBy.get(k)!.toFixed(2)})`).join(', ') || 'none'}`,
    );
  };
  const expectValues = (got: PromVector[], by: string[], want: Record<string, number>, label: string): void => {
    expect(Object.fromEntries(got.map((v) => [keyOf(v, by), Number(v.value[1])]))).toEqual(want);
    figures.push(`${label}: ${JSON.stringify(want)}`);
  };
  const expectFinite = (got: PromVector[], by: string[], keys: string[], label: string): void => {
    const gotBy = new Map(got.map((v) => [keyOf(v, by), Number(v.value[1])]));
    for (const k of keys) {
      const g = gotBy.get(k);
      if (g === undefined || !Number.isFinite(g) || g < 0) throw new Error(`${label}: ${k} reads ${g}`);
    }
    figures.push(`${label}: ${[...gotBy].map(([k, v]) => `${k}=${v.toFixed(4)}`).join(', ')}`);
  };

  type Check = (got: PromVector[]) => void;
  const CHECKS: Record<string, Check> = {
    'Platform API requests by status#A': (g) => {
      const want = produced('fusion_platform_requests_total', ['status']);
      expect(want.get('429')).toBe(SCENARIO.platform429);
      expectIncrease(g, ['status'], want, 'platform requests by status');
    },
    'Platform 429s and retries#A': (g) => {
      const want = produced('fusion_platform_rate_limited_total', ['platform_endpoint']);
      expect(want.get('/v3/accounts')).toBe(SCENARIO.platform429);
      expectIncrease(g, ['platform_endpoint'], want, '429s by endpoint');
    },
    'Platform 429s and retries#B': (g) => {
      const want = produced('fusion_platform_retries_total', ['reason']);
      expect(want.get('rate_limited')).toBe(SCENARIO.platform429);
      expectIncrease(g, ['reason'], want, 'retries by reason');
    },
    'Platform 429s and retries#C': (g) => {
      const want = produced('fusion_ratelimit_throttled_total', ['limiter']);
      expect(Object.fromEntries(want)).toEqual({ [limiters.normal]: 0, [limiters.throttled]: SCENARIO.platform429 });
      expectIncrease(g, ['limiter'], want, '429s by limiter key');
    },
    'Configured vs achieved RPS by limiter key#A': (g) =>
      expectValues(
        g,
        ['limiter'],
        { [limiters.normal]: 40, [limiters.throttled]: 10 },
        'configured RPS by limiter key',
      ),
    'Configured vs achieved RPS by limiter key#B': (g) =>
      expectIncrease(
        g,
        ['limiter'],
        produced('fusion_ratelimit_requests_total', ['limiter']),
        'requests sent by limiter key',
      ),
    'Rate-limiter wait vs concurrency wait (p95 by limiter key)#A': (g) =>
      expectFinite(g, ['limiter'], [limiters.normal, limiters.throttled], 'limiter wait p95 (s)'),
    'Rate-limiter wait vs concurrency wait (p95 by limiter key)#B': (g) =>
      expectFinite(g, ['limiter'], [limiters.normal, limiters.throttled], 'concurrency wait p95 (s)'),
    'Platform API latency p95 by endpoint#A': (g) =>
      expectFinite(g, ['platform_endpoint'], ['/v3/accounts'], 'platform latency p95 (s)'),
    'Queue depth by state#A': (g) =>
      expectValues(
        g,
        ['state'],
        { waiting: 0, active: 0, delayed: 0, failed: 0, completed: 0, prioritized: 0 },
        'queue depth by state',
      ),
    'Workers connected#A': (g) => expectValues(g, [], { '': 1 }, 'workers connected'),
    'Estimated drain time#A': (g) => expectValues(g, [], { '': 0 }, 'estimated drain time'),
    'Jobs by command and outcome#A': (g) => {
      const want = produced('fusion_jobs_total', ['command', 'outcome']);
      expect(want.get('std:account:list|error')).toBe(SCENARIO.failedAggregations);
      expect(want.get('std:account:list|success')).toBe(2);
      expectIncrease(g, ['command', 'outcome'], want, 'jobs by command and outcome');
    },
    'Job duration p95 by command#A': (g) => expectFinite(g, ['command'], ['std:account:list'], 'job duration p95 (s)'),
    'Active streams#A': (g) => expectValues(g, [], { '': 0 }, 'active streams'),
    'Stream throughput#A': (g) =>
      expectIncrease(g, ['mode'], produced('fusion_stream_bytes_total', ['mode']), 'stream bytes'),
    'Stream throughput#B': (g) =>
      expectIncrease(g, ['mode'], produced('fusion_stream_items_total', ['mode']), 'stream items'),
    'Proxy requests by status#A': (g) => {
      const want = produced('fusion_http_requests_total', ['status']);
      expect(want.get('401')).toBe(SCENARIO.wrongPasswords);
      expectIncrease(g, ['status'], want, 'proxy requests by status');
    },
    'Proxy latency p95 by route#A': (g) => {
      // Probes and scrapes are not requests: only the proxy route.
      expect(g.map((v) => v.metric.route)).toEqual(['/']);
      expectFinite(g, ['route'], ['/'], 'proxy latency p95 (s)');
    },
    'Authentication failures#A': (g) => {
      const want = produced('fusion_auth_failures_total', ['reason']);
      expect(Object.fromEntries(want)).toEqual({ missing: 0, mismatch: SCENARIO.wrongPasswords, throttled: 0 });
      expectIncrease(g, ['reason'], want, 'authentication failures');
    },
    'Errors by component and code#A': (g) => {
      const want = produced('fusion_errors_total', ['component', 'code']);
      expect(want.get(`worker|${failureCode}`)).toBe(SCENARIO.failedAggregations);
      expectIncrease(g, ['component', 'code'], want, 'errors');
    },
    'Accounts processed and review forms#A': (g) =>
      expectIncrease(g, ['command'], produced('fusion_accounts_processed_total', ['command']), 'accounts processed'),
    'Accounts processed and review forms#B': (g) =>
      expectIncrease(g, [], produced('fusion_review_forms_created_total', []), 'review forms created'),
    'Lock attempts#A': (g) =>
      expectIncrease(g, ['result'], produced('fusion_lock_attempts_total', ['result']), 'lock attempts'),
    'Event loop lag p99#A': (g) => expectFinite(g, ['pod'], ['fp-api-0', 'fp-worker-0'], 'event loop lag p99 (s)'),
    'Resident memory#A': (g) => expectFinite(g, ['pod'], ['fp-api-0', 'fp-worker-0'], 'resident memory (bytes)'),
  };

  const targets = dashboard.panels
    .filter((p) => p.type !== 'row')
    .flatMap((p) => (p.targets ?? []).map((t) => ({ id: `${p.title}#${t.refId}`, expr: t.expr })));

  it('has a check for every query of the dashboard', () => {
    expect(targets.map((t) => t.id).filter((id) => !(id in CHECKS))).toEqual([]);
    expect(Object.keys(CHECKS).filter((id) => !targets.some((t) => t.id === id))).toEqual([]);
  });

  it('the template variables list the namespace and both jobs', async () => {
    const [ns, job] = dashboard.templating.list.filter((v) => v.definition).map((v) => v.definition!);
    const parse = (def: string): [string, string] => {
      const m = /^label_values\((.*),\s*(\w+)\)$/.exec(def)!;
      return [m[1]!.replace(/\$namespace/g, NAMESPACE), m[2]!];
    };
    expect(await prom.labelValues(...parse(ns!))).toEqual([NAMESPACE]);
    expect((await prom.labelValues(...parse(job!))).sort()).toEqual([API_JOB, WORKER_JOB]);
  });

  it('every query returns what the run produced: a rare failure, a throttled tenant, wrong passwords', async () => {
    const problems: string[] = [];
    for (const t of targets) {
      try {
        CHECKS[t.id]!(await evaluate(t.expr));
      } catch (e) {
        problems.push(`${t.id}: ${(e as Error).message}`);
      }
    }
    process.stdout.write(
      `dashboard over a ${W().toFixed(1)} s run (failure code ${failureCode}):\n  ${figures.join('\n  ')}\n`,
    );
    expect(problems).toEqual([]);
  });

  it('the failures were logged with their code and message, never as "[object Object]"', () => {
    const logs = [api, worker].map((p) => p.logs.join('')).join('');
    expect(logs).toContain(failureCode);
    expect(logs).not.toContain('[object Object]');
  });
});
