import { registry } from '../../src/observability/metrics-registry';
import { METRIC } from '../../src/observability/metric-names';
import { limiterLabel } from '../../src/platform/metrics';
import { caught, clientFor, collect, useSimulator, startSim, type RunningSimulator } from './support';

/** Value of one sample of a metric, 0 when absent. */
async function sample(name: string, labels: Record<string, string> = {}, suffix = ''): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const want = Object.entries(labels);
  let sum = 0;
  for (const v of (m?.values ?? []) as { value: number; labels: Record<string, unknown>; metricName?: string }[]) {
    if (suffix && v.metricName !== `${name}${suffix}`) continue;
    if (want.every(([k, x]) => String(v.labels[k]) === x)) sum += v.value;
  }
  return sum;
}

/** The simulator's own limit and every fault type, met by the real platform client. */
describe('simulator limits and faults through the PlatformClient', () => {
  let sim: RunningSimulator;
  useSimulator({ rateLimit: false }, (s) => (sim = s));

  const statuses = (template: string): number[] =>
    sim.control
      .requestLog()
      .filter((e) => e.template === template)
      .map((e) => e.status);

  it('default limit: 100 requests per 10 s per client id, then 429 with Retry-After', async () => {
    const limited = await startSim(); // no rateLimit option: the platform-like default
    try {
      // Our limiter well above the platform's. The 100 allowed requests get the default deadline (a
      // loaded machine may take seconds for some); the 101st a deadline shorter than the Retry-After.
      const warm = clientFor(limited, { requestsPerSecond: 500, maxConcurrentRequests: 10 });
      const client = clientFor(limited, { requestsPerSecond: 500, maxConcurrentRequests: 10, provisioningTimeout: 2 });
      const id = limited.tenant.meta.managedSourceIds[0];
      await Promise.all(Array.from({ length: 100 }, () => warm.getSource(id)));
      const err = await caught(client.getSource(id));
      expect(err.code).toBe('PLATFORM_RATE_LIMITED');
      expect(err.message).toMatch(/Lower "Requests per second" \(now 500\)/);
      const log = limited.control.requestLog().filter((e) => e.template === '/v3/sources/{id}');
      expect(log.slice(0, 100).every((e) => e.status === 200)).toBe(true);
      expect(log.slice(100).map((e) => e.status)).toEqual([429]);
      // Another client id has its own window.
      limited.control.addClient({ clientId: 'second', clientSecret: 'second-secret', scopes: ['sp:scopes:all'] });
      const other = clientFor(limited, { clientId: 'second', clientSecret: 'second-secret' });
      expect((await other.getSource(id)).id).toBe(id);
      client.close();
      other.close();
    } finally {
      await limited.close();
    }
  });

  it('the Nth-request fault: the third GET answers 503 once, the client retries it', async () => {
    const client = clientFor(sim);
    const id = sim.tenant.meta.managedSourceIds[0];
    sim.control.injectFault({ method: 'GET', pathTemplate: '/v3/sources/{id}', nth: 3, status: 503, times: 1 });
    for (let i = 0; i < 4; i++) expect((await client.getSource(id)).id).toBe(id);
    expect(statuses('/v3/sources/{id}')).toEqual([200, 200, 503, 200, 200]);
    client.close();
  });

  it('the Kth-page fault on a searchAfter search: page 2 answers 500 once, the listing is still complete', async () => {
    const client = clientFor(sim, {}, { identityPage: 5 });
    sim.control.injectFault({ pathTemplate: '/v3/search', page: 2, status: 500, times: 1 });
    const ids = (await collect(client.searchIdentities('*'))).map((i) => i.id);
    expect(ids.sort()).toEqual([...sim.tenant.identities.keys()].sort());
    const s = statuses('/v3/search');
    expect(s.slice(0, 3)).toEqual([200, 500, 200]);
    expect(s.filter((x) => x !== 200)).toEqual([500]);
    client.close();
  });

  it('the latency fault delays the answer without failing it', async () => {
    const client = clientFor(sim);
    const id = sim.tenant.meta.managedSourceIds[0];
    sim.control.injectFault({ pathTemplate: '/v3/sources/{id}', latencyMs: 150, times: 1 });
    expect((await client.getSource(id)).id).toBe(id);
    const log = sim.control.requestLog().filter((e) => e.template === '/v3/sources/{id}');
    expect(log.map((e) => e.status)).toEqual([200]);
    expect(log[0].durationMs).toBeGreaterThanOrEqual(150);
    client.close();
  });

  it('the drop fault on page 2 of accounts: the read is retried and the listing is complete', async () => {
    const client = clientFor(sim, { batchSize: 10 });
    const ldap = [...sim.tenant.sources.values()].find((s) => s.name === 'LDAP')!;
    sim.control.injectFault({ pathTemplate: '/v3/accounts', page: 2, drop: true, times: 1 });
    const ids = (await collect(client.listAccounts({ sourceId: ldap.id }))).map((a) => a.id);
    expect(ids.sort()).toEqual([...sim.tenant.accountsOfSource(ldap.id).keys()].sort());
    const page2 = sim.control.requestLog().filter((e) => e.template === '/v3/accounts' && e.query.offset === '10');
    expect(page2.map((e) => e.status)).toEqual([0, 200]);
    client.close();
  });

  it('a drop on a write that was sent is not repeated (the platform may have applied it)', async () => {
    const client = clientFor(sim);
    const id = sim.tenant.meta.managedSourceIds[0];
    sim.control.injectFault({ method: 'POST', pathTemplate: '/beta/sources/{id}/load-accounts', drop: true, times: 1 });
    const err = await caught(client.startAggregation(id));
    expect(err.code).toBe('PLATFORM_REQUEST_FAILED');
    expect(statuses('/beta/sources/{id}/load-accounts')).toEqual([0]);
    client.close();
  });

  it('holds at most "Maximum concurrent requests" in flight (Enable queue on)', async () => {
    const client = clientFor(sim, { requestsPerSecond: 500, maxConcurrentRequests: 3 });
    const id = sim.tenant.meta.managedSourceIds[0];
    await client.getSource(id); // token first, so every call below is a platform request
    sim.control.resetLog();
    sim.control.injectFault({ pathTemplate: '/v3/sources/{id}', latencyMs: 40, times: Infinity });
    await Promise.all(Array.from({ length: 12 }, () => client.getSource(id)));
    const spans = sim.control
      .requestLog()
      .filter((e) => e.template === '/v3/sources/{id}')
      .map((e) => [e.at, e.at + e.durationMs] as const);
    expect(spans).toHaveLength(12);
    // Most requests overlapping any one request's start, counted at the server.
    const peak = Math.max(...spans.map(([start]) => spans.filter(([a, b]) => a <= start && start < b).length));
    expect(peak).toBe(3);
    client.close();
  });

  it('exports 429s, retries, limiter and concurrency waits, durations and the configured RPS by limiter key', async () => {
    const client = clientFor(sim, { requestsPerSecond: 37 });
    const limiter = limiterLabel(new URL(sim.baseurl).host, sim.clientId);
    expect(limiter).toMatch(/^127\.0\.0\.1:\d+\/[0-9a-f]{8}$/);
    expect(await sample(METRIC.rateLimitConfiguredRps, { limiter })).toBe(37);
    // Another client id of the same tenant has its own key; it does not overwrite this one's figure.
    clientFor(sim, { clientId: 'another-client', requestsPerSecond: 12 }).close();
    expect(await sample(METRIC.rateLimitConfiguredRps, { limiter })).toBe(37);
    expect(
      await sample(METRIC.rateLimitConfiguredRps, {
        limiter: limiterLabel(new URL(sim.baseurl).host, 'another-client'),
      }),
    ).toBe(12);
    const id = sim.tenant.meta.managedSourceIds[0];
    const before = {
      throttled: await sample(METRIC.rateLimitThrottled, { limiter }),
      sent: await sample(METRIC.rateLimitRequests, { limiter }),
      gateWaits: await sample(METRIC.concurrencyWait, { limiter }, '_count'),
      r429: await sample(METRIC.platform429, { platform_endpoint: '/v3/sources/{id}' }),
      retries: await sample(METRIC.platformRetries, { platform_endpoint: '/v3/sources/{id}', reason: 'rate_limited' }),
      waits: await sample(METRIC.rateLimiterWait, { limiter }, '_count'),
      durations: await sample(
        METRIC.platformRequestDuration,
        { platform_endpoint: '/v3/sources/{id}', method: 'GET' },
        '_count',
      ),
      statuses: await sample(METRIC.platformRequests, {
        platform_endpoint: '/v3/sources/{id}',
        method: 'GET',
        status: '429',
      }),
    };
    sim.control.injectFault({ pathTemplate: '/v3/sources/{id}', status: 429, retryAfter: '0', times: 1 });
    await client.getSource(id);
    expect(await sample(METRIC.platform429, { platform_endpoint: '/v3/sources/{id}' })).toBe(before.r429 + 1);
    expect(
      await sample(METRIC.platformRetries, { platform_endpoint: '/v3/sources/{id}', reason: 'rate_limited' }),
    ).toBe(before.retries + 1);
    expect(await sample(METRIC.rateLimiterWait, { limiter }, '_count')).toBeGreaterThanOrEqual(before.waits + 2);
    expect(await sample(METRIC.concurrencyWait, { limiter }, '_count')).toBeGreaterThanOrEqual(before.gateWaits + 2);
    expect(await sample(METRIC.rateLimitThrottled, { limiter })).toBe(before.throttled + 1);
    expect(await sample(METRIC.rateLimitRequests, { limiter })).toBe(before.sent + 2);
    expect(
      await sample(METRIC.platformRequestDuration, { platform_endpoint: '/v3/sources/{id}', method: 'GET' }, '_count'),
    ).toBe(before.durations + 2);
    expect(
      await sample(METRIC.platformRequests, { platform_endpoint: '/v3/sources/{id}', method: 'GET', status: '429' }),
    ).toBe(before.statuses + 1);
    client.close();
  });
});
