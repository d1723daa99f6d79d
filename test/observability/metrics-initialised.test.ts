/**
 * #14 item 2: a series that appears at its first increment has that 1 as its first sample, so
 * increase() and rate() read the first event as nothing. The serving process must expose every
 * labelled counter at 0 for its known label values from the start; probes and scrapes must not be
 * counted as traffic; the rate-limit figures carry the limiter key, never a secret.
 */
import { createLogger } from '../../src/observability/logger';
import { METRIC } from '../../src/observability/metric-names';
import { COMMAND_TYPES } from '../../src/core/command-types';
import { startWorkerMatchingShards, type MatchingShards } from '../../src/queue/worker-matching-shards';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { loadEnv } from '../../src/server/env';
import { startServer, type RunningServer } from '../../src/server/server';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { proxyItems } from '../../src/proxy-client';
import { parsePromText, samples, type Sample } from '../support/prom-text';
import { redisUrl, uniquePrefix } from '../support/redis';
import { scaled } from '../support/time-factor';

const PASSWORD = 'metrics-test-password-0123456789';
/** Counters with no series at start: the limiter key is only known once a tenant is served (see limiterLabel). */
const NOT_AT_START = new Set<string>([METRIC.rateLimitRequests, METRIC.rateLimitThrottled]);

describe('metrics at start (queue mode, api and worker in one process, production runner)', () => {
  let server: RunningServer;
  let shards: MatchingShards;
  let sim: RunningSimulator;
  const logs: string[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, tenant: { identities: 20, accountsPerSource: 10 }, rateLimit: false });
    const env = loadEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      PROXY_PASSWORD: PASSWORD,
      REDIS_URL: redisUrl(),
      QUEUE_NAME: uniquePrefix('q'),
    });
    const logger = createLogger({ level: 'info', destination: { write: (s: string) => void logs.push(s) } });
    // As `fusion-proxy serve` wires a worker: it also serves matching child jobs (their counters included).
    shards = startWorkerMatchingShards(env, { url: redisUrl() }, logger);
    server = await startServer(env, { runner: createProductionRunner({ matchingShards: shards.provider }), logger });
  });
  afterAll(async () => {
    await server?.close();
    await shards?.close();
    await sim?.close();
  });

  const scrape = async (): Promise<Sample[]> => parsePromText(await (await fetch(`${server.url}/metrics`)).text());

  it('every labelled counter has its known series at 0 before anything happened', async () => {
    const all = await scrape();
    const counters = Object.values(METRIC).filter((n) => n.endsWith('_total'));
    const labelled = counters.filter((n) => all.some((s) => s.name === n && Object.keys(s.labels).length > 0));
    const missing = counters.filter(
      (n) => !NOT_AT_START.has(n) && !all.some((s) => s.name === n) && n !== METRIC.reviewFormsCreated,
    );
    expect(missing).toEqual([]);
    for (const n of labelled) expect(samples(all, n).filter((s) => s.value !== 0)).toEqual([]);
    // The ones the issue saw read 0 on the dashboard after real events.
    for (const command of COMMAND_TYPES)
      for (const outcome of ['success', 'error', 'cancelled'])
        expect(samples(all, METRIC.jobs, { command, outcome })).toHaveLength(1);
    for (const component of ['api', 'worker'])
      for (const code of ['CONFIG_INVALID', 'PLATFORM_UNAUTHORIZED', 'UNEXPECTED', 'SERVER_SHUTTING_DOWN'])
        expect(samples(all, METRIC.errors, { component, code }).map((s) => s.value)).toEqual([0]);
    for (const reason of ['missing', 'mismatch', 'throttled'])
      expect(samples(all, METRIC.authFailures, { reason }).map((s) => s.value)).toEqual([0]);
    for (const status of ['200', '400', '401', '429', '500', '503'])
      expect(samples(all, METRIC.httpRequests, { route: '/', method: 'POST', status }).map((s) => s.value)).toEqual([
        0,
      ]);
    expect(samples(all, METRIC.platform429, { platform_endpoint: '/v3/accounts' }).map((s) => s.value)).toEqual([0]);
    for (const status of ['200', '404', '429', '500', 'error'])
      expect(
        samples(all, METRIC.platformRequests, { platform_endpoint: '/v3/accounts', method: 'GET', status }).map(
          (s) => s.value,
        ),
      ).toEqual([0]);
    expect(
      samples(all, METRIC.platformRetries, { platform_endpoint: '/v3/search', reason: 'server_error' }),
    ).toHaveLength(1);
    expect(samples(all, METRIC.lockAttempts, { result: 'busy' }).map((s) => s.value)).toEqual([0]);
    expect(samples(all, `${METRIC.jobDuration}_count`, { command: 'std:account:list', outcome: 'error' })).toHaveLength(
      1,
    );
    // The unlabelled counter is exposed at 0 by prom-client itself.
    expect(samples(all, METRIC.reviewFormsCreated).map((s) => s.value)).toEqual([0]);
  });

  it('probe routes and scrapes are not counted as requests; a rejected password is, once', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      await scrape();
    }
    const res = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'std:test-connection', input: {}, config: { proxyPassword: 'wrong-password' } }),
    });
    expect(res.status).toBe(401);
    // The count lands when the response is finished, which the client may see first.
    let all = await scrape();
    const end = Date.now() + scaled(10_000);
    while (samples(all, METRIC.httpRequests, { status: '401' })[0]?.value !== 1 && Date.now() < end)
      all = await scrape();
    const routes = new Set(samples(all, METRIC.httpRequests).map((s) => s.labels.route));
    expect([...routes]).toEqual(['/']);
    expect(samples(all, `${METRIC.httpRequestDuration}_count`).map((s) => s.labels.route)).toEqual(['/']);
    expect(samples(all, METRIC.httpRequests, { status: '401' }).map((s) => s.value)).toEqual([1]);
    expect(samples(all, METRIC.authFailures, { reason: 'mismatch' }).map((s) => s.value)).toEqual([1]);
  });

  it('rate-limit figures per limiter key: tenant host and a hash of the client id, never the secret; one key does not overwrite another', async () => {
    const config = (rps: number, clientId: string, clientSecret: string): Record<string, unknown> => ({
      proxyEnabled: true,
      proxyPassword: PASSWORD,
      baseurl: sim.baseurl,
      clientId,
      clientSecret,
      spConnectorInstanceId: sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes
        .spConnectorInstanceId,
      sources: ['Contractors', 'LDAP', 'Legacy'],
      requestsPerSecond: rps,
      maxConcurrentRequests: 2,
    });
    const run = async (c: Record<string, unknown>): Promise<number> => {
      let n = 0;
      for await (const _ of proxyItems({
        url: `${server.url}/`,
        password: PASSWORD,
        type: 'std:test-connection',
        input: {},
        config: c,
      }))
        n++;
      return n;
    };
    expect(await run(config(40, sim.clientId, sim.clientSecret))).toBe(1);
    // A second client of another RPS (its token request fails: the limiter key exists all the same).
    await expect(run(config(10, 'other-client-id-42', 'other-secret-value-42'))).rejects.toThrow();
    const all = await scrape();
    const rps = samples(all, METRIC.rateLimitConfiguredRps);
    const host = new URL(sim.baseurl).host;
    expect(rps.map((s) => s.labels.limiter).sort()).toEqual(
      [expect.stringMatching(new RegExp(`^${host.replace(/\./g, '\\.')}/[0-9a-f]{8}$`))].concat(
        expect.stringMatching(/\/[0-9a-f]{8}$/),
      ),
    );
    const byValue = Object.fromEntries(rps.map((s) => [s.value, s.labels.limiter]));
    expect(Object.keys(byValue).sort()).toEqual(['10', '40']);
    expect(byValue['10']).not.toBe(byValue['40']);
    const sent = samples(all, METRIC.rateLimitRequests, { limiter: byValue['40']! });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.value).toBeGreaterThan(0);
    expect(samples(all, METRIC.rateLimitThrottled, { limiter: byValue['40']! }).map((s) => s.value)).toEqual([0]);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    for (const secret of [sim.clientSecret, sim.clientId, 'other-secret-value-42', 'other-client-id-42', PASSWORD])
      expect(text).not.toContain(secret);
  });
});
