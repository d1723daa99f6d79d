import { AccountsApi, SearchApi, SourcesApi, Index } from 'sailpoint-api-client';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { failure, fetchToken, testClient, type TestClient } from './client';

let sim: RunningSimulator;
let c: TestClient;
const consoleLog = console.log;

beforeAll(async () => {
  // the library logs "Warning: You are using Experimental APIs" on every experimental call
  console.log = () => undefined;
  sim = await startSimulator({
    seed: 7,
    tenant: { identities: 120, accountsPerSource: 60, duplicateRate: 0.2 },
    rateLimit: false,
  });
  c = await testClient(sim);
});

afterAll(async () => {
  console.log = consoleLog;
  await sim.close();
});

describe('oauth token', () => {
  it('issues a bearer token for multipart, urlencoded and JSON bodies', async () => {
    const multipart = new FormData();
    multipart.set('grant_type', 'client_credentials');
    multipart.set('client_id', sim.clientId);
    multipart.set('client_secret', sim.clientSecret);
    const bodies: { body: RequestInit['body']; headers?: Record<string, string> }[] = [
      { body: multipart },
      {
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: sim.clientId,
          client_secret: sim.clientSecret,
        }),
      },
      {
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: sim.clientId,
          client_secret: sim.clientSecret,
        }),
        headers: { 'content-type': 'application/json' },
      },
    ];
    for (const b of bodies) {
      const res = await fetch(`${sim.baseurl}/oauth/token`, { method: 'POST', body: b.body, headers: b.headers });
      expect(res.status).toBe(200);
      const json = (await res.json()) as Record<string, unknown>;
      expect(json).toMatchObject({ token_type: 'bearer', scope: 'sp:scopes:all' });
      expect(typeof json['access_token']).toBe('string');
      expect(json['expires_in']).toBe(749);
    }
  });

  it('answers 401 for a wrong secret', async () => {
    const res = await fetch(`${sim.baseurl}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: sim.clientId, client_secret: 'wrong' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('answers 401 with a platform error body for a missing or revoked token', async () => {
    const none = await fetch(`${sim.baseurl}/v3/sources`);
    expect(none.status).toBe(401);
    const body = (await none.json()) as Record<string, unknown>;
    expect(body['detailCode']).toBe('401 Unauthorized');
    expect(typeof body['trackingId']).toBe('string');
    expect(body['messages']).toEqual([{ locale: 'en-US', localeOrigin: 'DEFAULT', text: expect.any(String) }]);

    sim.control.addClient({ clientId: 'revokable', clientSecret: 'revokable-secret', scopes: ['sp:scopes:all'] });
    const rc = await testClient(sim, { clientId: 'revokable', clientSecret: 'revokable-secret' });
    const api = new SourcesApi(rc.cfg, undefined, rc.http);
    expect((await api.listSources({ limit: 1 })).status).toBe(200);
    expect(sim.control.revokeTokens('revokable')).toBe(1);
    expect((await failure(api.listSources({ limit: 1 }))).status).toBe(401);
    // other clients keep their tokens
    expect((await new SourcesApi(c.cfg, undefined, c.http).listSources({ limit: 1 })).status).toBe(200);
  });

  it('answers 403 when the token lacks the scope of an endpoint', async () => {
    sim.control.addClient({ clientId: 'forms-only', clientSecret: 'forms-only-secret', scopes: ['sp:forms:manage'] });
    const fc = await testClient(sim, { clientId: 'forms-only', clientSecret: 'forms-only-secret' });
    const f = await failure(new AccountsApi(fc.cfg, undefined, fc.http).listAccounts({ limit: 1 }));
    expect(f.status).toBe(403);
    expect(f.data).toMatchObject({ detailCode: '403 Forbidden' });
    sim.control.addClient({
      clientId: 'accounts-reader',
      clientSecret: 'accounts-reader-secret',
      scopes: ['sp:accounts:read'],
    });
    const ac = await testClient(sim, { clientId: 'accounts-reader', clientSecret: 'accounts-reader-secret' });
    expect((await new AccountsApi(ac.cfg, undefined, ac.http).listAccounts({ limit: 1 })).status).toBe(200);
  });
});

describe('sources', () => {
  it('lists, filters by name and id, and gets a source', async () => {
    const api = new SourcesApi(c.cfg, undefined, c.http);
    const all = await api.listSources({ count: true });
    expect(all.data.map((s) => s.name)).toEqual(['HR', 'Contractors', 'LDAP', 'Legacy', 'Identity Fusion']);
    expect(all.headers['x-total-count']).toBe('5');
    const hr = await api.listSources({ filters: 'name eq "HR"' });
    expect(hr.data).toHaveLength(1);
    expect(hr.data[0]).toMatchObject({ name: 'HR', authoritative: true });
    // like the platform, eq on names ignores case: exact-name checks are the connector's job
    expect((await api.listSources({ filters: 'name eq "hr"' })).data.map((s) => s.name)).toEqual(['HR']);
    const byId = await api.listSources({ filters: `id eq "${sim.tenant.meta.fusionSourceId}"` });
    expect(byId.data[0]?.name).toBe('Identity Fusion');
    const got = await api.getSource({ id: sim.tenant.meta.fusionSourceId as string });
    expect(got.data.connectorAttributes).toMatchObject({
      spConnectorInstanceId: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const legacy = all.data.find((s) => s.name === 'Legacy');
    expect(legacy?.connectorAttributes).toMatchObject({ enabled: false });
  });

  it('patches connectorAttributes with JSON Patch and returns schemas', async () => {
    const api = new SourcesApi(c.cfg, undefined, c.http);
    const id = sim.tenant.meta.fusionSourceId as string;
    const res = await api.updateSource({
      id,
      jsonPatchOperation: [{ op: 'replace', path: '/connectorAttributes/fusionState', value: { runs: 3 } }],
    });
    expect(res.data.connectorAttributes).toMatchObject({ fusionState: { runs: 3 } });
    expect((await api.getSource({ id })).data.connectorAttributes).toMatchObject({ fusionState: { runs: 3 } });
    const bad = await failure(
      api.updateSource({ id, jsonPatchOperation: [{ op: 'replace', path: '/id', value: 'x' }] }),
    );
    expect(bad.status).toBe(400);
    const schemas = await api.getSourceSchemas({ sourceId: id });
    expect(schemas.data[0]?.attributes?.map((a) => a.name)).toContain('email');
  });

  it('gives 404 with a platform body for an unknown source and an unknown path', async () => {
    const f = await failure(new SourcesApi(c.cfg, undefined, c.http).getSource({ id: 'missing' }));
    expect(f.status).toBe(404);
    expect(f.data).toMatchObject({ detailCode: '404 Not found' });
    const res = await fetch(`${sim.baseurl}/v3/no-such-thing`, { headers: { authorization: `Bearer ${c.token}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ detailCode: '404 Not found', messages: [{ locale: 'en-US' }] });
  });
});

describe('accounts', () => {
  const contractors = (): string => sim.tenant.meta.managedSourceIds[0] as string;

  it('pages a source with limit/offset and reports X-Total-Count', async () => {
    const api = new AccountsApi(c.cfg, undefined, c.http);
    const filters = `sourceId eq "${contractors()}"`;
    const first = await api.listAccounts({ limit: 25, offset: 0, count: true, filters });
    expect(first.headers['x-total-count']).toBe('60');
    const seen: string[] = [];
    for (let offset = 0; ; offset += 25) {
      const page = await api.listAccounts({ limit: 25, offset, filters });
      seen.push(...page.data.map((a) => a.id as string));
      if (page.data.length < 25) break;
    }
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    expect(first.data[0]).toMatchObject({
      sourceId: contractors(),
      sourceName: 'Contractors',
      disabled: false,
      uncorrelated: true,
    });
  });

  it('filters by nativeIdentity, identityId, name and combinations', async () => {
    const api = new AccountsApi(c.cfg, undefined, c.http);
    const a = [...sim.tenant.accountsOfSource(contractors()).values()][3];
    if (!a) throw new Error('no account');
    const byNative = await api.listAccounts({
      filters: `sourceId eq "${contractors()}" and nativeIdentity eq "${a.nativeIdentity}"`,
    });
    expect(byNative.data.map((x) => x.id)).toEqual([a.id]);
    const byName = await api.listAccounts({ filters: `name eq "${a.name}"` });
    expect(byName.data.map((x) => x.id)).toContain(a.id);
    const ident = [...sim.tenant.identities.values()][0];
    if (!ident) throw new Error('no identity');
    const byIdentity = await api.listAccounts({ filters: `identityId eq "${ident.id}"` });
    expect(byIdentity.data).toHaveLength(1);
    expect(byIdentity.data[0]?.sourceName).toBe('HR');
    const none = await api.listAccounts({ filters: `sourceId eq "${contractors()}" and nativeIdentity eq "nope"` });
    expect(none.data).toEqual([]);
  });

  it('rejects a limit over 250 and an unknown filter field with 400', async () => {
    const api = new AccountsApi(c.cfg, undefined, c.http);
    const big = await failure(api.listAccounts({ limit: 251 }));
    expect(big.status).toBe(400);
    expect(big.data).toMatchObject({ detailCode: '400.1 Bad Request Content' });
    const field = await failure(api.listAccounts({ filters: 'color eq "red"' }));
    expect(field.status).toBe(400);
    const syntax = await failure(api.listAccounts({ filters: 'name eq' }));
    expect(syntax.status).toBe(400);
  });

  it('creates, reads, correlates, disables, enables and deletes an account', async () => {
    const api = new AccountsApi(c.cfg, undefined, c.http);
    const created = await api.createAccount({
      accountAttributesCreate: {
        attributes: { sourceId: contractors(), name: 'new.person', nativeIdentity: 'NEW-1', email: 'n@x' },
      },
    });
    expect(created.status).toBe(202);
    const id = (created.data as { id: string }).id;
    const got = await api.getAccount({ id });
    expect(got.data).toMatchObject({
      nativeIdentity: 'NEW-1',
      name: 'new.person',
      isMachine: false,
      uncorrelated: true,
    });
    const ident = [...sim.tenant.identities.values()][1];
    if (!ident) throw new Error('no identity');
    await api.updateAccount({ id, requestBody: [{ op: 'replace', path: '/identityId', value: ident.id }] });
    expect((await api.getAccount({ id })).data).toMatchObject({
      identityId: ident.id,
      uncorrelated: false,
      manuallyCorrelated: true,
    });
    await api.disableAccount({ id, accountToggleRequest: {} });
    expect((await api.getAccount({ id })).data.disabled).toBe(true);
    await api.enableAccount({ id, accountToggleRequest: {} });
    expect((await api.getAccount({ id })).data.disabled).toBe(false);
    expect((await api.deleteAccount({ id })).status).toBe(202);
    expect((await failure(api.getAccount({ id }))).status).toBe(404);
  });

  it('honours isMachine on the account model', async () => {
    const machine = [...sim.tenant.accounts.values()].find((a) => a.isMachine);
    expect(machine).toBeDefined();
    const got = await new AccountsApi(c.cfg, undefined, c.http).getAccount({ id: machine?.id as string });
    expect(got.data.isMachine).toBe(true);
  });
});

describe('identity search', () => {
  it('pages all identities with sort and searchAfter', async () => {
    const api = new SearchApi(c.cfg, undefined, c.http);
    const ids: string[] = [];
    let searchAfter: string[] | undefined;
    for (;;) {
      const res = await api.searchPost({
        search: { indices: [Index.Identities], query: { query: '*' }, sort: ['id'], searchAfter },
        limit: 50,
        count: ids.length === 0,
      });
      if (ids.length === 0) expect(res.headers['x-total-count']).toBe('120');
      ids.push(...res.data.map((d) => (d as { id: string }).id));
      if (res.data.length < 50) break;
      searchAfter = [ids[ids.length - 1] as string];
    }
    expect(ids).toHaveLength(120);
    expect([...ids].sort()).toEqual(ids);
  });

  it('supports field queries, attributes, AND/OR and access.id', async () => {
    const api = new SearchApi(c.cfg, undefined, c.http);
    const first = [...sim.tenant.identities.values()][0];
    if (!first) throw new Error('no identity');
    const byName = await api.searchPost({
      search: { indices: [Index.Identities], query: { query: `name:"${first.name}"` } },
    });
    expect(byName.data.map((d) => (d as { id: string }).id)).toEqual([first.id]);
    const doc = byName.data[0] as { accounts: { source: { name: string } }[]; attributes: Record<string, unknown> };
    expect(doc.accounts[0]?.source.name).toBe('HR');
    const dept = String(first.attributes['department']);
    const byDept = await api.searchPost({
      search: { indices: [Index.Identities], query: { query: `attributes.department:"${dept}" AND id:${first.id}` } },
    });
    expect(byDept.data).toHaveLength(1);
    const second = [...sim.tenant.identities.values()][1];
    const either = await api.searchPost({
      search: { indices: [Index.Identities], query: { query: `id:${first.id} OR id:${second?.id}` } },
    });
    expect(either.data).toHaveLength(2);
    const ap = [...sim.tenant.accessProfiles.values()].find((p) => p.name === 'Contractors Reviewer');
    const reviewers = await api.searchPost({
      search: { indices: [Index.Identities], query: { query: `access.id:"${ap?.id}"` } },
    });
    expect(reviewers.data.length).toBe(2);
    expect(reviewers.data.map((d) => (d as { id: string }).id).sort()).toEqual(
      sim.tenant.identitiesWithAccess(ap?.id as string).sort(),
    );
  });

  it('refuses offset + limit over 10000 with 400', async () => {
    const api = new SearchApi(c.cfg, undefined, c.http);
    const f = await failure(
      api.searchPost({
        search: { indices: [Index.Identities], query: { query: '*' }, sort: ['id'] },
        offset: 9950,
        limit: 100,
      }),
    );
    expect(f.status).toBe(400);
    expect(JSON.stringify(f.data)).toContain('searchAfter');
    const bad = await failure(api.searchPost({ search: { indices: [Index.Identities], query: { query: 'name:(' } } }));
    expect(bad.status).toBe(400);
  });
});

describe("the library's own token fetch", () => {
  it('works against the simulator (multipart client-credentials request)', async () => {
    const { Configuration } = await import('sailpoint-api-client');
    const axios = (await import('axios')).default;
    const cfg = new Configuration({
      baseurl: sim.baseurl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      tokenUrl: `${sim.baseurl}/oauth/token`,
    });
    cfg.retriesConfig = { retries: 0 };
    const res = await new SourcesApi(cfg, undefined, axios.create()).listSources({ limit: 2 });
    expect(res.data).toHaveLength(2);
  });
});

describe('token endpoint via the library-style fetch helper', () => {
  it('returns distinct tokens per request', async () => {
    const a = await fetchToken(sim, sim.clientId, sim.clientSecret);
    const b = await fetchToken(sim, sim.clientId, sim.clientSecret);
    expect(a).not.toBe(b);
  });
});
