import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import type { Search } from 'sailpoint-api-client';
import { registry } from '../../src/observability/metrics-registry';
import { METRIC } from '../../src/observability/metric-names';
import { FAST_POLICY, caught, clientFor, collect, useSimulator, startSim, type RunningSimulator } from './support';
import { scaled } from '../support/time-factor';

/** The socket closes on the tick after the abort; give it a few event-loop turns. */
async function socketsClosed(client: { openSockets(): number }): Promise<void> {
  for (let i = 0; i < 50 && client.openSockets() > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(client.openSockets()).toBe(0);
}

describe('PlatformClient against the simulator', () => {
  let sim: RunningSimulator;
  useSimulator({ rateLimit: false }, (s) => (sim = s));

  it('makes no request until the first call', async () => {
    const client = clientFor(sim);
    await new Promise((r) => setTimeout(r, 20));
    expect(sim.control.counters().requests).toBe(0);
    client.close();
  });

  it('lists sources and accounts through sailpoint-api-client, one token for all calls', async () => {
    const client = clientFor(sim);
    const sources = await collect(client.listSources());
    expect(sources.map((s) => s.name)).toEqual(expect.arrayContaining(['HR', 'Contractors', 'LDAP', 'Legacy']));
    expect(sources.find((s) => s.name === 'Legacy')?.enabled).toBe(false);
    expect(sources.find((s) => s.name === 'HR')?.authoritative).toBe(true);
    const ldap = sources.find((s) => s.name === 'LDAP');
    const accounts = await collect(client.listAccounts({ sourceId: ldap!.id }));
    expect(accounts.length).toBeGreaterThan(0);
    expect(new Set(accounts.map((a) => a.sourceId))).toEqual(new Set([ldap!.id]));
    expect(accounts[0]).toMatchObject({
      sourceName: 'LDAP',
      id: expect.any(String),
      nativeIdentity: expect.any(String),
    });
    const one = await client.getAccount(accounts[0].id);
    expect(one?.id).toBe(accounts[0].id);
    expect(await client.getAccount('does-not-exist')).toBeUndefined();
    const byNative = await client.findAccountByNativeIdentity(ldap!.id, accounts[1].nativeIdentity);
    expect(byNative?.id).toBe(accounts[1].id);
    expect(sim.control.counters().tokensIssued).toBe(1);
    client.close();
  });

  it('streams pages: the next page is fetched only when the consumer asks', async () => {
    const client = clientFor(sim, { batchSize: 10 });
    const hr = (await collect(client.listSources())).find((s) => s.name === 'HR')!;
    sim.control.resetLog();
    const it = client.listAccounts({ sourceId: hr.id })[Symbol.asyncIterator]();
    await it.next();
    expect(sim.control.requestLog().filter((e) => e.template === '/v3/accounts')).toHaveLength(1);
    await it.return?.();
    client.close();
  });

  it.each([
    [50, 50],
    [250, 250],
    [500, 250],
  ])('batch size %i (page %i) gives the same account set', async (batchSize, expectedLimit) => {
    const client = clientFor(sim, { batchSize });
    const hr = (await collect(client.listSources())).find((s) => s.name === 'HR')!;
    const reference = [...sim.tenant.accountsOfSource(hr.id).keys()].sort();
    sim.control.resetLog();
    const ids = (await collect(client.listAccounts({ sourceId: hr.id }))).map((a) => a.id);
    expect(ids.sort()).toEqual(reference);
    expect(new Set(ids).size).toBe(ids.length);
    const limits = new Set(
      sim.control
        .requestLog()
        .filter((e) => e.template === '/v3/accounts')
        .map((e) => e.query.limit),
    );
    expect(limits).toEqual(new Set([String(expectedLimit)]));
    client.close();
  });

  it('pages past 250 with offsets advanced by items received (600 accounts, page 250)', async () => {
    const big = await startSim({ rateLimit: false, tenant: { identities: 600, accountsPerSource: 5 } });
    try {
      const client = clientFor(big, { batchSize: 500 });
      const hr = (await collect(client.listSources())).find((s) => s.name === 'HR')!;
      const ids = (await collect(client.listAccounts({ sourceId: hr.id }))).map((a) => a.id);
      expect(ids).toHaveLength(600);
      expect(new Set(ids).size).toBe(600);
      const offsets = big.control
        .requestLog()
        .filter((e) => e.template === '/v3/accounts')
        .map((e) => Number(e.query.offset));
      // Pages after the first are read ahead concurrently: their requests may arrive in any order.
      expect(offsets.sort((a, b) => a - b)).toEqual([0, 250, 500]);
      client.close();
      // Page sizes 50, 250 and 500 (clamped to 250) give identical account sets.
      const sets: string[][] = [];
      for (const batchSize of [50, 250, 500]) {
        big.control.resetLog();
        const c = clientFor(big, { batchSize });
        sets.push((await collect(c.listAccounts({ sourceId: hr.id }))).map((a) => a.id).sort());
        const limits = new Set(
          big.control
            .requestLog()
            .filter((e) => e.template === '/v3/accounts')
            .map((e) => e.query.limit),
        );
        expect(limits).toEqual(new Set([String(Math.min(batchSize, 250))]));
        c.close();
      }
      expect(sets[0]).toHaveLength(600);
      expect(sets[1]).toEqual(sets[0]);
      expect(sets[2]).toEqual(sets[0]);
      expect(sets[0]).toEqual([...ids].sort());
    } finally {
      await big.close();
    }
  });

  it('returns accounts added to the simulator during the listing, past the first page total', async () => {
    const client = clientFor(sim, { batchSize: 10 });
    const ldap = (await collect(client.listSources())).find((s) => s.name === 'LDAP')!;
    const before = (await collect(client.listAccounts({ sourceId: ldap.id }))).map((a) => a.id);
    const added: string[] = [];
    const seen: string[] = [];
    try {
      for await (const a of client.listAccounts({ sourceId: ldap.id })) {
        seen.push(a.id);
        if (seen.length !== 1) continue;
        // After the first page (its X-Total-Count counted only the old accounts); ids sort last.
        for (let i = 0; i < 15; i++) {
          const id = `zzzz-added-${String(i).padStart(2, '0')}`;
          added.push(id);
          const now = new Date().toISOString();
          sim.tenant.addAccount({
            id,
            sourceId: ldap.id,
            nativeIdentity: id,
            name: id,
            disabled: false,
            locked: false,
            isMachine: false,
            manuallyCorrelated: false,
            attributes: {},
            created: now,
            modified: now,
          });
        }
      }
      expect(seen).toEqual([...before, ...added].sort());
      // A total that shrinks mid-listing: no error, no loop, every remaining account once.
      const remaining: string[] = [];
      for await (const a of client.listAccounts({ sourceId: ldap.id })) {
        remaining.push(a.id);
        if (remaining.length === 1) for (const id of added) sim.tenant.removeAccount(id);
      }
      expect(remaining).toEqual(before);
    } finally {
      for (const id of added) if (sim.tenant.accounts.has(id)) sim.tenant.removeAccount(id);
      client.close();
    }
  });

  it('stops after `limit` accounts (aggregation batch size)', async () => {
    const client = clientFor(sim, { batchSize: 5 });
    const hr = (await collect(client.listSources())).find((s) => s.name === 'HR')!;
    expect(await collect(client.listAccounts({ sourceId: hr.id, limit: 7 }))).toHaveLength(7);
    client.close();
  });

  it('searches identities with searchAfter, no offset', async () => {
    const client = clientFor(sim, { batchSize: 250 }, { identityPage: 6 });
    const ids = (await collect(client.searchIdentities('*'))).map((i) => i.id);
    expect(ids.sort()).toEqual([...sim.tenant.identities.keys()].sort());
    const searches = sim.control.requestLog().filter((e) => e.template === '/v3/search');
    expect(searches.length).toBe(Math.floor(ids.length / 6) + 1);
    expect(searches.every((e) => e.query.offset === undefined)).toBe(true);
    expect(searches.every((e) => e.query.limit === '6')).toBe(true);
    const one = await client.getIdentity(ids[3]);
    expect(one?.id).toBe(ids[3]);
    expect(one?.name).not.toBe('');
    expect(Object.keys(one!.attributes).length).toBeGreaterThan(0);
    client.close();
  });

  it('at its defaults, a baseline search asks for 2,500 identities a page whatever the batch size, trimmed to the fields read', async () => {
    const big = await startSim({ rateLimit: false, tenant: { identities: 5_200, accountsPerSource: 10 } });
    // A recording pass-through in front of the simulator: what the client asks for, as sent.
    const bodies: string[] = [];
    const answers: string[] = [];
    const recorder = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.url?.startsWith('/v3/search')) bodies.push(body.toString());
        const up = httpRequest(`${big.baseurl}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          if (req.url?.startsWith('/v3/search')) {
            const answer: Buffer[] = [];
            r.on('data', (c: Buffer) => answer.push(c));
            r.on('end', () => answers.push(Buffer.concat(answer).toString()));
          }
          r.pipe(res);
        });
        up.end(body);
      });
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    try {
      const client = clientFor(
        { ...big, baseurl: `http://127.0.0.1:${(recorder.address() as AddressInfo).port}` },
        { batchSize: 50 },
      );
      const identities = await collect(client.searchIdentities('*'));
      expect(bodies.map((b) => JSON.parse(b) as Search)).toEqual(
        Array(3).fill(
          expect.objectContaining({
            includeNested: false,
            queryResultFilter: { includes: ['id', 'name', 'attributes'] },
          }),
        ),
      );
      // The platform's answers: documents of those fields only, no nested accounts or access.
      const keys = new Set(answers.flatMap((a) => (JSON.parse(a) as object[]).flatMap((d) => Object.keys(d))));
      expect([...keys].sort()).toEqual(['attributes', 'id', 'name']);
      expect(identities.map((i) => i.id).sort()).toEqual([...big.tenant.identities.keys()].sort());
      const searches = big.control.requestLog().filter((e) => e.template === '/v3/search');
      expect(searches.map((e) => e.query.limit)).toEqual(['2500', '2500', '2500']);
      // What a run reads of an identity is all there.
      const sample = identities[0]!;
      expect(sample.name).not.toBe('');
      expect(Object.keys(sample.attributes).length).toBeGreaterThan(0);
      client.close();
    } finally {
      recorder.close();
      await big.close();
    }
  });

  it('fails the whole listing when page 3 answers 500, never a shorter list', async () => {
    const client = clientFor(sim, { batchSize: 5 });
    const hr = (await collect(client.listSources())).find((s) => s.name === 'HR')!;
    sim.control.injectFault({ pathTemplate: '/v3/accounts', page: 3, status: 500, times: Infinity });
    const seen: string[] = [];
    const err = await caught(
      (async () => {
        for await (const a of client.listAccounts({ sourceId: hr.id })) seen.push(a.id);
      })(),
    );
    expect(err.code).toBe('PLATFORM_REQUEST_FAILED');
    expect(err.message).toContain('GET /v3/accounts');
    expect(err.message).toContain('HTTP 500');
    expect(err.message).toContain('4 attempt(s)');
    expect(seen).toHaveLength(10);
    const page3 = sim.control.requestLog().filter((e) => e.template === '/v3/accounts' && e.query.offset === '10');
    expect(page3).toHaveLength(4); // bounded retries
    client.close();
  });

  it('retries a 5xx and a dropped connection on a read, then succeeds', async () => {
    const client = clientFor(sim);
    sim.control.injectFault({ pathTemplate: '/v3/sources', status: 503, times: 1 });
    sim.control.injectFault({ pathTemplate: '/v3/sources', drop: true, nth: 2, times: 1 });
    const sources = await collect(client.listSources());
    expect(sources.length).toBeGreaterThan(3);
    // Both faults fired (0 = dropped), then the page was served.
    expect(
      sim.control
        .requestLog()
        .filter((e) => e.template === '/v3/sources')
        .map((e) => e.status),
    ).toEqual([503, 0, 200]);
    client.close();
  });

  it('refreshes a token before it expires (short tokenTtlSeconds)', async () => {
    const short = await startSim({ rateLimit: false, tokenTtlSeconds: 1 });
    try {
      const client = clientFor(short);
      await collect(client.listSources());
      await new Promise((r) => setTimeout(r, 1000));
      await collect(client.listSources());
      const c = short.control.counters();
      expect(c.tokensIssued).toBe(2);
      expect(c.unauthorized).toBe(0);
      client.close();
    } finally {
      await short.close();
    }
  });

  it('gets a new token once when the platform revokes the cached one', async () => {
    const client = clientFor(sim);
    await collect(client.listSources());
    sim.control.revokeTokens(sim.clientId);
    await collect(client.listSources());
    const c = sim.control.counters();
    expect(c.unauthorized).toBe(1);
    expect(c.tokensIssued).toBeGreaterThanOrEqual(2);
    client.close();
  });

  it('401: says the token id or secret is wrong or revoked, without the secret', async () => {
    const client = clientFor(sim, { clientSecret: 'definitely-wrong-secret' });
    const err = await caught(collect(client.listSources()));
    expect(err.code).toBe('PLATFORM_UNAUTHORIZED');
    expect(err.message).toMatch(/token id \(clientId\) or secret \(clientSecret\) is wrong, or the token was revoked/);
    expect(err.message).toMatch(/regenerate the token/);
    expect(err.message).not.toContain('definitely-wrong-secret');
    expect(JSON.stringify(err.details)).not.toContain('definitely-wrong-secret');
    client.close();
  });

  it('403: names sp:scopes:all and the scope the endpoint needs', async () => {
    sim.control.addClient({ clientId: 'forms-only', clientSecret: 'forms-only-secret', scopes: ['sp:forms:manage'] });
    const client = clientFor(sim, { clientId: 'forms-only', clientSecret: 'forms-only-secret' });
    const err = await caught(collect(client.listAccounts({ sourceId: 'x' })));
    expect(err.code).toBe('PLATFORM_FORBIDDEN');
    expect(err.message).toContain('GET /v3/accounts');
    expect(err.message).toContain('sp:scopes:all');
    expect(err.message).toContain('sp:accounts:read');
    expect(sim.control.requestLog().filter((e) => e.status === 403)).toHaveLength(1); // not retried
    client.close();
  });

  it('a call past its deadline stops: timeout error, socket closed, no further request', async () => {
    const client = clientFor(sim, { provisioningTimeout: 1 });
    // The server would answer after twice this test's own limit: whatever stopped the call was the client.
    sim.control.injectFault({ pathTemplate: '/v3/sources', latencyMs: scaled(60_000), times: Infinity });
    const err = await caught(collect(client.listSources()));
    const stoppedAt = Date.now();
    expect(err.code).toBe('PLATFORM_TIMEOUT');
    expect(err.message).toContain('GET /v3/sources');
    // ...and it was the 1 s deadline (the message names the limit that passed), not a lower layer's.
    expect(err.message).toMatch(/did not complete within 1 s/);
    await socketsClosed(client);
    await new Promise((r) => setTimeout(r, 1700));
    const sent = sim.control.requestLog().filter((e) => e.template === '/v3/sources');
    expect(sent.every((e) => e.at <= stoppedAt)).toBe(true);
    expect(client.openSockets()).toBe(0);
    client.close();
  });

  it('a token fetch past the call deadline stops at the deadline, not at the token timeout', async () => {
    const client = clientFor(sim, { provisioningTimeout: 1 });
    sim.control.injectFault({ pathTemplate: '/oauth/token', latencyMs: scaled(60_000), times: 1 });
    const err = await caught(client.getSource('x'));
    expect(err.code).toBe('PLATFORM_TIMEOUT');
    // The call's 1 s deadline, not the token fetch's own timeout (30 s), is the limit the error names.
    expect(err.message).toMatch(/did not complete within 1 s/);
    // The simulator saw the token request's client go away (499), within the deadline.
    for (let i = 0; i < 50 && !sim.control.requestLog().some((e) => e.template === '/oauth/token'); i++)
      await new Promise((r) => setTimeout(r, 10));
    const token = sim.control.requestLog().filter((e) => e.template === '/oauth/token');
    expect(token.map((e) => e.status)).toEqual([499]);
    client.close();
  });

  it('a caller\'s deadline (the clean-up session\'s AbortSignal.timeout) is a timeout, never "cancelled"', async () => {
    const client = clientFor(sim, {}, { signal: AbortSignal.timeout(300) });
    // The platform is slow to answer: the caller's deadline passes first.
    sim.control.injectFault({ pathTemplate: '/v3/sources/{id}', latencyMs: 5000, times: Infinity });
    const err = await caught(client.getSource('x'));
    sim.control.clearFaults();
    expect(err.code).toBe('PLATFORM_TIMEOUT');
    expect(err.message).toMatch(/GET \/v3\/sources\/\{id\} did not complete within the time its step allows/);
    expect(err.message).not.toMatch(/cancelled/);
    client.close();
  });

  it('a cancelled command aborts its request at once', async () => {
    const ac = new AbortController();
    const client = clientFor(sim, {}, { signal: ac.signal });
    sim.control.injectFault({ pathTemplate: '/v3/sources', latencyMs: 1000, times: 1 });
    setTimeout(() => ac.abort(), 100);
    const err = await caught(collect(client.listSources()));
    expect(err.code).toBe('COMMAND_CANCELLED');
    await socketsClosed(client);
    client.close();
  });

  it('a failing token endpoint costs one call at most maxAttempts token requests', async () => {
    sim.control.injectFault({ pathTemplate: '/oauth/token', status: 503, times: Infinity });
    const client = clientFor(sim);
    const err = await caught(client.getSource('x'));
    expect(err.code).toBe('PLATFORM_REQUEST_FAILED');
    expect(sim.control.requestLog().filter((e) => e.template === '/oauth/token')).toHaveLength(FAST_POLICY.maxAttempts);
    client.close();
  });

  it('token endpoint failures reject the call and nothing else (no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => {
      unhandled.push(e);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      sim.control.injectFault({ pathTemplate: '/oauth/token', status: 503, times: Infinity });
      const client = clientFor(sim);
      const [a, b] = await Promise.all([caught(collect(client.listSources())), caught(client.getSource('x'))]);
      expect(a.code).toBe('PLATFORM_REQUEST_FAILED');
      expect(b.code).toBe('PLATFORM_REQUEST_FAILED');
      expect(a.message).toContain('POST /oauth/token');
      // Bounded: at most maxAttempts (4) token requests per call.
      expect(sim.control.requestLog().filter((e) => e.template === '/oauth/token').length).toBeLessThanOrEqual(8);
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      client.close();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('concurrent first calls share one token request', async () => {
    sim.control.injectFault({ pathTemplate: '/oauth/token', latencyMs: 100, times: 1 });
    const client = clientFor(sim);
    await Promise.all([
      client.getSource(sim.tenant.meta.managedSourceIds[0]),
      collect(client.listSources()),
      collect(client.searchIdentities('*')),
      client.getAccount('x'),
    ]);
    expect(sim.control.requestLog().filter((e) => e.template === '/oauth/token')).toHaveLength(1);
    client.close();
  });

  it('adds no interceptor to the global axios', async () => {
    const handlers = (m: unknown): number => ((m as { handlers?: unknown[] }).handlers ?? []).filter(Boolean).length;
    const before = [handlers(axios.interceptors.request), handlers(axios.interceptors.response)];
    const client = clientFor(sim);
    await collect(client.listSources());
    await collect(client.searchIdentities('*'));
    expect([handlers(axios.interceptors.request), handlers(axios.interceptors.response)]).toEqual(before);
    expect(before).toEqual([0, 0]);
    client.close();
  });

  it('exports metrics labelled by path template, never by id', async () => {
    const client = clientFor(sim);
    await client.getAccount('no-such-account-id');
    const text = await registry.getSingleMetricAsString(METRIC.platformRequests);
    expect(text).toContain('platform_endpoint="/v3/accounts/{id}"');
    expect(text).not.toContain('no-such-account-id');
    client.close();
  });
});
