import { AccountsApi, Index, SearchApi, SourcesApi } from 'sailpoint-api-client';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { until } from '../support/until';
import { failure, testClient, type TestClient } from './client';

let sim: RunningSimulator;
let c: TestClient;

beforeAll(async () => {
  sim = await startSimulator({ seed: 3, tenant: { identities: 40, accountsPerSource: 30 }, rateLimit: false });
  c = await testClient(sim);
});

afterEach(() => {
  sim.control.clearFaults();
  sim.control.setRateLimit(false);
});

afterAll(async () => {
  await sim.close();
});

const sourceFilter = (): string => `sourceId eq "${sim.tenant.meta.managedSourceIds[0]}"`;

describe('rate limit', () => {
  it('answers 429 with Retry-After in seconds once the window is full', async () => {
    sim.control.setRateLimit({ requests: 3, windowMs: 60_000 });
    const api = new SourcesApi(c.cfg, undefined, c.http);
    for (let i = 0; i < 3; i++) expect((await api.listSources({ limit: 1 })).status).toBe(200);
    const f = await failure(api.listSources({ limit: 1 }));
    expect(f.status).toBe(429);
    const retryAfter = Number(f.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(f.data).toMatchObject({ detailCode: '429 Too Many Requests' });
    expect(sim.control.counters().rateLimited).toBeGreaterThanOrEqual(1);
  });

  it('counts per client id', async () => {
    sim.control.setRateLimit({ requests: 2, windowMs: 60_000 });
    sim.control.addClient({ clientId: 'other', clientSecret: 'other-secret', scopes: ['sp:scopes:all'] });
    const other = await testClient(sim, { clientId: 'other', clientSecret: 'other-secret' });
    const a = new SourcesApi(c.cfg, undefined, c.http);
    const b = new SourcesApi(other.cfg, undefined, other.http);
    await a.listSources({ limit: 1 });
    await a.listSources({ limit: 1 });
    expect((await failure(a.listSources({ limit: 1 }))).status).toBe(429);
    expect((await b.listSources({ limit: 1 })).status).toBe(200);
  });
});

describe('fault injection', () => {
  it('fails the Nth matching request with the given status and Retry-After, `times` times', async () => {
    sim.control.injectFault({
      method: 'GET',
      pathTemplate: '/v3/accounts',
      nth: 2,
      times: 2,
      status: 503,
      retryAfter: '7',
    });
    const api = new AccountsApi(c.cfg, undefined, c.http);
    expect((await api.listAccounts({ limit: 1 })).status).toBe(200);
    const f = await failure(api.listAccounts({ limit: 1 }));
    expect(f.status).toBe(503);
    expect(f.headers['retry-after']).toBe('7');
    expect((await failure(api.listAccounts({ limit: 1 }))).status).toBe(503);
    expect((await api.listAccounts({ limit: 1 })).status).toBe(200);
  });

  it('fails a given offset/limit page only', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/accounts', page: 2, status: 500 });
    const api = new AccountsApi(c.cfg, undefined, c.http);
    expect((await api.listAccounts({ limit: 10, offset: 0, filters: sourceFilter() })).status).toBe(200);
    expect((await failure(api.listAccounts({ limit: 10, offset: 10, filters: sourceFilter() }))).status).toBe(500);
    expect((await api.listAccounts({ limit: 10, offset: 20, filters: sourceFilter() })).status).toBe(200);
    // the retry of the failed page succeeds (times defaults to 1)
    expect((await api.listAccounts({ limit: 10, offset: 10, filters: sourceFilter() })).data).toHaveLength(10);
  });

  it('fails a given searchAfter page', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/search', page: 3, status: 502 });
    const api = new SearchApi(c.cfg, undefined, c.http);
    const search = (searchAfter?: string[]) =>
      api.searchPost({
        search: { indices: [Index.Identities], query: { query: '*' }, sort: ['id'], searchAfter },
        limit: 10,
      });
    const p1 = await search();
    const p2 = await search([(p1.data[9] as { id: string }).id]);
    const f = await failure(search([(p2.data[9] as { id: string }).id]));
    expect(f.status).toBe(502);
    const p3 = await search([(p2.data[9] as { id: string }).id]);
    expect(p3.data).toHaveLength(10);
  });

  it('adds latency without failing when only latencyMs is given', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/sources/{id}', latencyMs: 30 });
    sim.control.resetLog();
    const res = await new SourcesApi(c.cfg, undefined, c.http).getSource({
      id: sim.tenant.meta.fusionSourceId as string,
    });
    expect(res.status).toBe(200);
    const entry = sim.control.requestLog().find((e) => e.template === '/v3/sources/{id}');
    expect(entry?.durationMs).toBeGreaterThanOrEqual(25);
  });

  it('drops the connection', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/sources', drop: true });
    const err = await new SourcesApi(c.cfg, undefined, c.http).listSources({ limit: 1 }).then(
      () => undefined,
      (e: unknown) => e as { code?: string; response?: unknown },
    );
    expect(err).toBeDefined();
    expect(err?.response).toBeUndefined();
    expect(err?.code).toMatch(/ECONNRESET|ERR_NETWORK|ECONNABORTED|EPIPE/);
    const logged = sim.control.requestLog().filter((e) => e.template === '/v3/sources');
    expect(logged[logged.length - 1]?.status).toBe(0);
  });

  it('holds a request until released; one whose client leaves is no longer held and never handled', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/held', hold: true, times: Infinity });
    sim.control.resetLog();
    const answered = fetch(`${sim.baseurl}/v3/held`);
    await until('the first request held', () => sim.control.heldRequests() === 1, 10_000);
    expect(sim.control.releaseHeld()).toBe(1);
    expect((await answered).status).toBe(404);
    const gone = new AbortController();
    const left = fetch(`${sim.baseurl}/v3/held`, { signal: gone.signal }).catch((e: unknown) => e);
    await until('the second request held', () => sim.control.heldRequests() === 1, 10_000);
    gone.abort();
    await left;
    // What a killed client leaves: the platform drops the request, so a later release cannot run it.
    await until('the request of the client that left dropped', () => sim.control.heldRequests() === 0, 10_000);
    expect(sim.control.releaseHeld()).toBe(0);
    expect(sim.control.requestLog().map((e) => e.status)).toEqual([404, 499]);
  });

  it('applies to unknown paths as well', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/nowhere', status: 418 });
    const res = await fetch(`${sim.baseurl}/v3/nowhere`);
    expect(res.status).toBe(418);
  });
});

describe('request log and counters', () => {
  it('records method, path, template, status, client id and query', async () => {
    sim.control.resetLog();
    const api = new AccountsApi(c.cfg, undefined, c.http);
    await api.listAccounts({ limit: 5, filters: sourceFilter() });
    const id = [...sim.tenant.accounts.keys()][0] as string;
    await api.getAccount({ id });
    const log = sim.control.requestLog();
    expect(log.map((e) => [e.method, e.template, e.status])).toEqual([
      ['GET', '/v3/accounts', 200],
      ['GET', '/v3/accounts/{id}', 200],
    ]);
    expect(log[0]?.query).toMatchObject({ limit: '5', filters: sourceFilter() });
    expect(log[1]?.path).toBe(`/v3/accounts/${id}`);
    expect(log[0]?.clientId).toBe(sim.clientId);
    const counters = sim.control.counters();
    expect(counters.requests).toBe(2);
    expect(counters.byTemplate['GET /v3/accounts']).toBe(1);
    expect(counters.byStatus['200']).toBe(2);
  });
});
