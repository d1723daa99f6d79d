import { freePort } from '../support/free-port';
import http from 'node:http';
import net from 'node:net';
import { createLogger } from '../../src/observability/logger';
import { registry } from '../../src/observability/metrics-registry';
import { loadEnv } from '../../src/server/env';
import { separateMetricsPort } from '../../src/server/metrics-server';
import { startServer } from '../../src/server/server';
import { ScriptedRunner } from '../support/scripted-runner';
import { commandBody, ndjsonItems, post, startHarness, type Harness, type Mode } from './harness';

interface Got {
  status: number;
  contentType: string;
  body: string;
}

/** GET without keep-alive, so a closed listener shows as a refused connection, not a reused socket. */
function get(url: string): Promise<Got> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body }),
        );
      })
      .on('error', reject);
  });
}

async function refused(url: string): Promise<boolean> {
  try {
    await get(url);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
}

/** A port nothing listens on right now (the OS picks it, then it is released). */

const ROLES: Array<[string, Mode, Record<string, string>]> = [
  ['ROLE=all (embedded)', 'embedded', {}],
  ['ROLE=api (queue)', 'queue', { ROLE: 'api' }],
  ['ROLE=worker (queue)', 'queue', { ROLE: 'worker', PROXY_PASSWORD: '' }],
];

describe.each(ROLES)('METRICS_PORT set, %s', (_name, mode, overrides) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode, { ...overrides, METRICS_PORT: '0' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('serves the registry on the metrics port, and only there', async () => {
    expect(h.server.metrics).toBeDefined();
    const metricsUrl = h.server.metrics!.url;
    expect(metricsUrl).not.toBe(h.base);
    const res = await get(`${metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.contentType).toBe(registry.contentType);
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names).toContain('fusion_http_requests_total');
    expect(names.filter((n) => !res.body.includes(`# TYPE ${n} `))).toEqual([]);
    if (overrides.ROLE === 'api') expect(res.body).toMatch(/^fusion_queue_workers \d+$/m);

    const main = await get(`${h.base}/metrics`);
    expect(main.status).toBe(404);
  });

  it('serves nothing else on the metrics port; probes stay on the main port', async () => {
    const metricsUrl = h.server.metrics!.url;
    for (const path of ['/healthz', '/readyz', '/proxy', '/metrics/', '/'])
      expect((await get(`${metricsUrl}${path}`)).status).toBe(404);
    expect((await post(`${metricsUrl}/proxy`, commandBody())).status).toBe(404);
    expect((await post(`${metricsUrl}/metrics`, {})).status).toBe(404);
    expect((await get(`${h.base}/healthz`)).status).toBe(200);
  });
});

describe('METRICS_PORT and the proxy endpoint', () => {
  it('the api still streams on PORT, and the request is counted in what the metrics port serves', async () => {
    const h = await startHarness('embedded', { METRICS_PORT: '0' });
    try {
      const res = await post(`${h.base}/proxy`, commandBody({ items: 2 }));
      expect(res.status).toBe(200);
      expect(ndjsonItems(res.body)).toHaveLength(2);
      const scraped = await get(`${h.server.metrics!.url}/metrics`);
      expect(scraped.body).toMatch(/fusion_http_requests_total\{route="\/proxy",method="POST",status="200"\} [1-9]/);
      // Scrapes go to their own listener, so they never show up as proxy traffic.
      expect(scraped.body).not.toMatch(/fusion_http_requests_total\{route="\/metrics"/);
    } finally {
      await h.close();
    }
  });
});

describe('closing', () => {
  it('close() closes both listeners', async () => {
    const h = await startHarness('queue', { ROLE: 'worker', PROXY_PASSWORD: '', METRICS_PORT: '0' });
    const metricsUrl = h.server.metrics!.url;
    expect((await get(`${metricsUrl}/metrics`)).status).toBe(200);
    await h.close();
    expect(await refused(`${h.base}/healthz`)).toBe(true);
    expect(await refused(`${metricsUrl}/metrics`)).toBe(true);
    expect(h.server.metrics!.app.server.listening).toBe(false);
  });

  it('a metrics port already in use fails the start and leaves nothing listening', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as net.AddressInfo).port;
    const port = await freePort();
    const runner = new ScriptedRunner();
    const logs: string[] = [];
    const logger = createLogger({ level: 'error', destination: { write: (s: string) => void logs.push(s) } });
    const env = loadEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(taken),
      PROXY_PASSWORD: 'correct-horse-battery-staple',
    });
    try {
      await expect(startServer(env, { runner: runner.runner, logger })).rejects.toThrow(/EADDRINUSE/);
      expect(await refused(`http://127.0.0.1:${port}/healthz`)).toBe(true);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});

describe('METRICS_PORT unset or not separate', () => {
  it('keeps /metrics on PORT when METRICS_PORT is unset (npm start, the demo)', async () => {
    const h = await startHarness('embedded');
    try {
      expect(h.server.metrics).toBeUndefined();
      const res = await get(`${h.base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.body).toContain('# TYPE fusion_http_requests_total counter');
    } finally {
      await h.close();
    }
  });

  it('decides when a second listener is needed', () => {
    const env = (e: Record<string, string>) => loadEnv(e);
    expect(separateMetricsPort(env({}))).toBeUndefined();
    expect(separateMetricsPort(env({ METRICS_PORT: '9090' }))).toBe(9090);
    // Same port as PORT: one listener that serves /metrics, as without METRICS_PORT.
    expect(separateMetricsPort(env({ PORT: '9090', METRICS_PORT: '9090' }))).toBeUndefined();
    // 0 means "any free port" for each, so two listeners.
    expect(separateMetricsPort(env({ PORT: '0', METRICS_PORT: '0' }))).toBe(0);
    expect(separateMetricsPort(env({ METRICS_PORT: '9090', METRICS_ENABLED: 'false' }))).toBeUndefined();
  });

  it('METRICS_ENABLED=false with METRICS_PORT: no metrics anywhere', async () => {
    const h = await startHarness('embedded', { METRICS_PORT: '0', METRICS_ENABLED: 'false' });
    try {
      expect(h.server.metrics).toBeUndefined();
      expect((await get(`${h.base}/metrics`)).status).toBe(404);
    } finally {
      await h.close();
    }
  });
});
