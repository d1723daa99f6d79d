import { AccountsApi, SourcesBetaApi, TaskManagementBetaApi } from 'sailpoint-api-client';
import {
  attachConnectorAggregation,
  runPlatformAggregation,
  startSimulator,
  type InvokeFn,
  type RunningSimulator,
} from '../../src/simulator';
import { testClient, type TestClient } from './client';

/** A tiny stand-in for the connector: its accounts, returned disabled when new, enabled on request. */
function fakeConnector(initial: Record<string, Record<string, unknown>>, opts: { failEnable?: string } = {}) {
  const accounts = new Map(Object.entries(initial).map(([k, v]) => [k, { attributes: v, disabled: true }]));
  const calls: { type: string; input: Record<string, unknown> }[] = [];
  const invoke: InvokeFn = async function* (type, input) {
    calls.push({ type, input });
    if (type === 'std:account:list') {
      yield { type: 'keepAlive' };
      for (const [identity, a] of accounts)
        yield { identity, uuid: `u-${identity}`, disabled: a.disabled, attributes: a.attributes };
    } else if (type === 'std:account:enable') {
      const id = String(input['identity']);
      if (id === opts.failEnable) throw new Error(`cannot enable ${id}`);
      const a = accounts.get(id);
      if (!a) throw new Error(`unknown ${id}`);
      a.disabled = false;
      yield { identity: id, disabled: false, attributes: { ...a.attributes, enabledAt: 'now' } };
    } else throw new Error(`unexpected ${type}`);
  };
  return { accounts, calls, invoke };
}

let sim: RunningSimulator;
let c: TestClient;

beforeAll(async () => {
  sim = await startSimulator({ seed: 21, tenant: { identities: 20, accountsPerSource: 5 }, rateLimit: false });
  c = await testClient(sim);
});

afterAll(async () => {
  await sim.close();
});

const fusion = (): string => sim.tenant.meta.fusionSourceId as string;

describe('platform side of an aggregation', () => {
  it('creates accounts and identities, then enables new accounts through the connector', async () => {
    const conn = fakeConnector({
      'f-1': { name: 'ann.lee', firstName: 'Ann', lastName: 'Lee', email: 'ann@x' },
      'f-2': { name: 'bo.kim', firstName: 'Bo', lastName: 'Kim', email: 'bo@x' },
      'f-3': { name: 'cy.ng', firstName: 'Cy', lastName: 'Ng', email: 'cy@x' },
    });
    const before = sim.tenant.identities.size;
    const r = await runPlatformAggregation({ tenant: sim.tenant, invoke: conn.invoke });
    expect(r).toMatchObject({
      created: 3,
      updated: 0,
      removed: 0,
      identitiesCreated: 3,
      enabled: 3,
      skipped: 1,
      enableErrors: [],
    });
    expect(sim.tenant.identities.size).toBe(before + 3);
    expect(
      conn.calls
        .filter((x) => x.type === 'std:account:enable')
        .map((x) => x.input['identity'])
        .sort(),
    ).toEqual(['f-1', 'f-2', 'f-3']);
    expect(conn.calls.find((x) => x.type === 'std:account:enable')?.input).toMatchObject({
      key: { simple: { id: expect.any(String) } },
    });

    // what a client of the platform API now sees
    const api = new AccountsApi(c.cfg, undefined, c.http);
    const listed = await api.listAccounts({ filters: `sourceId eq "${fusion()}"` });
    expect(listed.data.map((a) => a.nativeIdentity).sort()).toEqual(['f-1', 'f-2', 'f-3']);
    for (const a of listed.data) {
      expect(a).toMatchObject({
        disabled: false,
        uncorrelated: false,
        sourceName: 'Identity Fusion',
        name: expect.any(String),
      });
      expect(a.attributes).toMatchObject({ enabledAt: 'now' });
      const ident = sim.tenant.identities.get(a.identityId as string);
      expect(ident?.attributes).toMatchObject({ email: a.attributes?.['email'] });
    }
  });

  it('updates, removes absent accounts (full aggregation) and correlates to an existing identity', async () => {
    const existing = [...sim.tenant.identities.values()][0];
    const conn = fakeConnector({
      'f-1': { name: 'ann.lee', firstName: 'Ann', lastName: 'Lee', email: 'ann@x', enabledAt: 'now' },
      'f-2': { name: 'bo.kim', firstName: 'Bo', lastName: 'Kim', email: 'bo.kim@new', enabledAt: 'now' },
      'f-4': { name: 'dee', identityId: existing?.id },
    });
    for (const k of ['f-1', 'f-2']) (conn.accounts.get(k) as { disabled: boolean }).disabled = false;
    const f3 = sim.tenant.accountByNative(fusion(), 'f-3');
    const f3Identity = f3?.identityId as string;
    const r = await runPlatformAggregation({ tenant: sim.tenant, invoke: conn.invoke });
    expect(r).toMatchObject({
      created: 1,
      updated: 1,
      unchanged: 1,
      removed: 1,
      identitiesCreated: 0,
      identitiesRemoved: 1,
      enabled: 1,
    });
    expect(sim.tenant.accountByNative(fusion(), 'f-3')).toBeUndefined();
    expect(sim.tenant.identities.has(f3Identity)).toBe(false);
    expect(sim.tenant.accountByNative(fusion(), 'f-2')?.attributes['email']).toBe('bo.kim@new');
    expect(sim.tenant.accountByNative(fusion(), 'f-4')?.identityId).toBe(existing?.id);
  });

  it('keeps an account disabled when enabling fails, and leaves others alone in a partial aggregation', async () => {
    const conn = fakeConnector({ 'f-9': { name: 'nine' } }, { failEnable: 'f-9' });
    const r = await runPlatformAggregation({ tenant: sim.tenant, invoke: conn.invoke, full: false });
    expect(r).toMatchObject({ created: 1, removed: 0, enabled: 0 });
    expect(r.enableErrors).toEqual([{ identity: 'f-9', message: 'cannot enable f-9' }]);
    expect(sim.tenant.accountByNative(fusion(), 'f-9')?.disabled).toBe(true);
    expect(sim.tenant.accountByNative(fusion(), 'f-1')).toBeDefined();
  });

  it('runs on a successful aggregation task of the connector source', async () => {
    const conn = fakeConnector({ 'g-1': { name: 'gee' } });
    const attached = attachConnectorAggregation(sim, conn.invoke);
    try {
      const started = await new SourcesBetaApi(c.cfg, undefined, c.http).importAccounts({ sourceId: fusion() });
      const status = await new TaskManagementBetaApi(c.cfg, undefined, c.http).getTaskStatus({
        id: started.data.task?.id as string,
      });
      expect(status.data.completionStatus).toBe('SUCCESS');
      expect(attached.last()).toMatchObject({ created: 1, enabled: 1 });
      expect([...sim.tenant.accountsOfSource(fusion()).values()].map((a) => a.nativeIdentity)).toEqual(['g-1']);
    } finally {
      attached.detach();
    }
  });

  it('fails the task with the connector error when the aggregation throws', async () => {
    const invoke: InvokeFn = async function* () {
      yield* [];
      throw new Error('matching config invalid');
    };
    const attached = attachConnectorAggregation(sim, invoke);
    try {
      const started = await new SourcesBetaApi(c.cfg, undefined, c.http).importAccounts({ sourceId: fusion() });
      const status = await new TaskManagementBetaApi(c.cfg, undefined, c.http).getTaskStatus({
        id: started.data.task?.id as string,
      });
      expect(status.data.completionStatus).toBe('ERROR');
      expect(status.data.messages[0]?.localizedText?.message).toBe('matching config invalid');
    } finally {
      attached.detach();
    }
  });
});
