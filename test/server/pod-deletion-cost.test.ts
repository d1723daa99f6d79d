/**
 * #28 item 13: a scale-in removes idle workers first. A worker keeps its pod's
 * controller.kubernetes.io/pod-deletion-cost at the number of commands it runs, through the Kubernetes
 * API (a fake one over HTTPS here, with its own certificate, as the in-cluster API has).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/observability/logger';
import { loadEnv } from '../../src/server/env';
import { POD_DELETION_COST_ANNOTATION, PodDeletionCost } from '../../src/server/pod-deletion-cost';
import { startServer, type RunningServer } from '../../src/server/server';
import { generateSelfSignedCert } from '../support/fake-proxy-server';
import { redisUrl, uniquePrefix } from '../support/redis';
import { ScriptedRunner } from '../support/scripted-runner';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';
import { commandBody, HARNESS_JOB_KEY, PASSWORD, post } from './harness';

jest.setTimeout(scaled(60_000));

interface Patch {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  cost: string | undefined;
}

class FakeKubeApi {
  readonly patches: Patch[] = [];
  /** What the API answers; 403 is what a service account without pods/patch gets. */
  status = 200;
  private server!: https.Server;
  url = '';
  constructor(private readonly tls: { key: string; cert: string }) {}

  async start(): Promise<void> {
    this.server = https.createServer(this.tls, (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => {
        const doc = JSON.parse(body || '{}') as { metadata?: { annotations?: Record<string, string> } };
        if (this.status < 300)
          this.patches.push({
            method: req.method ?? '',
            url: req.url ?? '',
            authorization: req.headers.authorization,
            contentType: req.headers['content-type'],
            cost: doc.metadata?.annotations?.[POD_DELETION_COST_ANNOTATION],
          });
        res.writeHead(this.status, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get last(): string | undefined {
    return this.patches.at(-1)?.cost;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const tls = generateSelfSignedCert();
const POD = { name: 'fp-fusion-proxy-worker-7d9c-x2k4q', namespace: 'identity' };

describe('a worker keeps its pod deletion cost at the commands it runs', () => {
  let api: FakeKubeApi;
  let server: RunningServer | undefined;
  let logs: string[];
  const runner = new ScriptedRunner();

  beforeEach(async () => {
    api = new FakeKubeApi(tls);
    await api.start();
    logs = [];
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await api.close();
  });

  async function start(): Promise<PodDeletionCost> {
    const logger = createLogger({ level: 'info', destination: { write: (s: string) => void logs.push(s) } });
    const env = loadEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      PROXY_PASSWORD: PASSWORD,
      REDIS_URL: redisUrl(),
      JOB_ENCRYPTION_KEY: HARNESS_JOB_KEY,
      QUEUE_NAME: uniquePrefix('q'),
      POD_DELETION_COST: 'true',
      POD_NAME: POD.name,
      POD_NAMESPACE: POD.namespace,
    });
    const cost = new PodDeletionCost({
      apiUrl: api.url,
      namespace: POD.namespace,
      pod: POD.name,
      token: () => 'service-account-token-1',
      ca: tls.cert,
      logger,
    });
    server = await startServer(env, { runner: runner.runner, logger, podDeletionCost: cost });
    return cost;
  }

  it('1 then 2 while two aggregations run, 0 once they end; a merge patch of the pod, with the token', async () => {
    const cost = await start();
    const url = `${server!.url}/`;
    const first = post(url, commandBody({ items: 2, gateAfterItems: 1, gate: 'a' }));
    await until('the cost of one running command', () => api.last === '1', 20_000, 10);
    const second = post(url, commandBody({ items: 2, gateAfterItems: 1, gate: 'a' }));
    await until('the cost of two running commands', () => api.last === '2', 20_000, 10);
    runner.release('a');
    const results = await Promise.all([first, second]);
    expect(results.map((r) => [r.status, r.complete])).toEqual([
      [200, true],
      [200, true],
    ]);
    await until('the cost of an idle worker', () => api.last === '0', 20_000, 10);
    await cost.settled();
    // Only changes are sent, one call at a time: the two jobs may end apart (2, 1, 0) or together (2, 0).
    const sent = api.patches.map((p) => p.cost);
    expect(sent.slice(0, 2)).toEqual(['1', '2']);
    expect(sent.at(-1)).toBe('0');
    expect(sent.every((c, i) => i === 0 || c !== sent[i - 1])).toBe(true);
    expect(sent.every((c) => ['0', '1', '2'].includes(c!))).toBe(true);
    for (const p of api.patches) {
      expect(p).toMatchObject({
        method: 'PATCH',
        url: `/api/v1/namespaces/${POD.namespace}/pods/${POD.name}`,
        authorization: 'Bearer service-account-token-1',
        contentType: 'application/merge-patch+json',
      });
    }
  });

  it('an API that refuses (no RBAC) never fails a command: one warning naming the cause, the cost sent once allowed', async () => {
    api.status = 403;
    const cost = await start();
    const url = `${server!.url}/`;
    const refused = await post(url, commandBody({ items: 3 }));
    expect([refused.status, refused.complete, refused.body.trim().split('\n')]).toEqual([200, true, expect.any(Array)]);
    expect(refused.body.trim().split('\n')).toHaveLength(3);
    await cost.settled();
    const warnings = logs.filter((l) => l.includes(POD_DELETION_COST_ANNOTATION));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('403');
    expect(warnings[0]).toContain('pods/patch');
    expect(api.patches).toEqual([]);
    api.status = 200;
    const allowed = post(url, commandBody({ items: 2, gateAfterItems: 1, gate: 'b' }));
    await until('the cost reaches the API', () => api.last === '1', 20_000, 10);
    runner.release('b');
    await allowed;
    await until('back to 0', () => api.last === '0', 20_000, 10);
  });
});

describe('settings', () => {
  const base = {
    PORT: '0',
    PROXY_PASSWORD: PASSWORD,
    REDIS_URL: 'redis://127.0.0.1:6379',
    JOB_ENCRYPTION_KEY: 'a'.repeat(64),
  };

  it.each([
    [{ POD_DELETION_COST: 'true' }, 'POD_DELETION_COST needs POD_NAME and POD_NAMESPACE'],
    [{ POD_DELETION_COST: 'true', POD_NAME: 'p', POD_NAMESPACE: 'n', ROLE: 'api' }, 'POD_DELETION_COST is for workers'],
    [
      { POD_DELETION_COST: 'true', POD_NAME: 'p', POD_NAMESPACE: 'n', REDIS_URL: '' },
      'POD_DELETION_COST needs queue mode',
    ],
    [{ POD_DELETION_COST: 'yes please' }, 'POD_DELETION_COST'],
  ])('%j is refused at boot: %s', (env, message) => {
    expect(() => loadEnv({ ...base, ...env })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => loadEnv({ ...base, ...env })).toThrow(message);
  });

  it('off by default: nothing calls the Kubernetes API', () => {
    expect(loadEnv(base).POD_DELETION_COST).toBe(false);
  });

  describe('in a cluster', () => {
    const logger = createLogger({ level: 'error', destination: { write: () => undefined } });
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sa-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('outside a cluster, or without a mounted token, says what is missing', () => {
      expect(() => PodDeletionCost.inCluster(POD, logger, {}, dir)).toThrow('KUBERNETES_SERVICE_HOST is not set');
      expect(() => PodDeletionCost.inCluster(POD, logger, { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, dir)).toThrow(
        'automountServiceAccountToken',
      );
    });

    it('uses the kubelet variables, the mounted CA and the token as it is at each call (rotated tokens)', async () => {
      const api = new FakeKubeApi(tls);
      await api.start();
      try {
        writeFileSync(join(dir, 'ca.crt'), tls.cert);
        writeFileSync(join(dir, 'token'), 'token-before-rotation\n');
        const port = new URL(api.url).port;
        const cost = PodDeletionCost.inCluster(
          POD,
          logger,
          { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: port },
          dir,
        );
        cost.set(1);
        await cost.settled();
        writeFileSync(join(dir, 'token'), 'token-after-rotation\n');
        cost.set(0);
        await cost.settled();
        cost.close();
        expect(api.patches.map((p) => [p.cost, p.authorization])).toEqual([
          ['1', 'Bearer token-before-rotation'],
          ['0', 'Bearer token-after-rotation'],
        ]);
      } finally {
        await api.close();
      }
    });
  });
});
