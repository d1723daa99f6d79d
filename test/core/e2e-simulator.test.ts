/**
 * End to end: the production runner (real platform client over HTTP, sailpoint-api-client) against
 * the simulator, with the simulator playing the platform's side of each aggregation.
 */
import type { Redis } from 'ioredis';
import type { CommandOutput } from '../../src/core/command-runner';
import type { CommandType } from '../../src/core/command-types';
import type { AggregationSummary } from '../../src/core/aggregation/aggregation-summary';
import { MODEL_PARAMETERS_KEY } from '../../src/core/aggregation/model-parameters';
import type { ModelParameters } from '../../src/core/matching/types';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { runPlatformAggregation } from '../../src/simulator/platform-aggregation';
import { openRedis, uniquePrefix } from '../support/redis';
import { context, type LogLine } from './support';
import { LOGIN_DEFINITION, tenantConnection } from '../support/tenant-config';

let sim: RunningSimulator;
let redis: Redis;
let initialIdentities: Set<string>;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 7,
    tenant: { identities: 60, accountsPerSource: 40, machineRate: 0.05 },
    rateLimit: false,
    logRequests: false,
  });
  redis = openRedis();
  initialIdentities = new Set(sim.tenant.identities.keys());
});

afterAll(async () => {
  await sim.close();
  await redis.quit();
});

function configFor(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...tenantConnection(sim),
    requestsPerSecond: 1000,
    maxConcurrentRequests: 20,
    attributeDefinitions: [
      LOGIN_DEFINITION,
      { name: 'employeeId', expression: 'F$counter', type: 'counter', digits: 6 },
    ],
    matching: { attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }] },
    ...extra,
  };
}

function setup(extra: Record<string, unknown> = {}, runtime: { redis?: Redis; keyPrefix?: string } = {}) {
  const summaries: AggregationSummary[] = [];
  const lines: LogLine[] = [];
  const runner = createProductionRunner({
    ...runtime,
    taskPollMs: 100,
    onAggregationSummary: (s) => summaries.push(s),
  });
  const config = configFor(extra);
  const invoke = (type: string, input: Record<string, unknown>): AsyncIterable<CommandOutput> =>
    runner(type as CommandType, input, config, context(lines));
  return { summaries, lines, invoke, aggregate: () => runPlatformAggregation({ tenant: sim.tenant, invoke }) };
}

function connectorAccounts() {
  return [...sim.tenant.accountsOfSource(sim.tenant.meta.fusionSourceId!).values()];
}

const PROBABILISTIC = {
  model: 'probabilistic',
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
  ],
};

/** One aggregation with the probabilistic model: the run, and the parameters the connector source holds after it. */
async function probabilisticRun(
  extra: Record<string, unknown> = {},
  runtime: { redis?: Redis; keyPrefix?: string } = {},
): Promise<ReturnType<typeof setup> & { stored: ModelParameters }> {
  const run = setup({ matching: PROBABILISTIC, ...extra }, runtime);
  await run.aggregate();
  const fusion = sim.tenant.source(sim.tenant.meta.fusionSourceId!);
  return { ...run, stored: fusion.connectorAttributes[MODEL_PARAMETERS_KEY] as ModelParameters };
}

function resetTenantState(): void {
  for (const a of connectorAccounts()) sim.tenant.removeAccount(a.id);
  // Identities the platform created for earlier runs' connector accounts would be a baseline of duplicates.
  for (const id of [...sim.tenant.identities.keys()]) if (!initialIdentities.has(id)) sim.tenant.identities.delete(id);
  sim.tenant.versions.identities++;
  sim.tenant.formDefinitions.clear();
  sim.tenant.formInstances.clear();
  sim.tenant.versions.forms++;
  const src = sim.tenant.source(sim.tenant.meta.fusionSourceId!);
  sim.tenant.replaceSource({
    ...src,
    connectorAttributes: { spConnectorInstanceId: src.connectorAttributes.spConnectorInstanceId },
  });
}

function assertNoDuplicates(attr: string): void {
  const values = connectorAccounts().map((a) => a.attributes[attr]);
  expect(values.every((v) => typeof v === 'string' && v !== '')).toBe(true);
  expect(new Set(values).size).toBe(values.length);
}

describe('aggregation against the simulator', () => {
  beforeEach(resetTenantState);

  test('three consecutive runs: accounts created disabled then enabled, unique values kept, counters continue, nothing re-issued', async () => {
    const t = setup();
    const first = await t.aggregate();
    const s1 = t.summaries[0]!;
    expect(first.created).toBe(s1.accountsCreated);
    expect(first.created).toBeGreaterThan(30);
    expect(first.enabled).toBe(first.created);
    expect(first.enableErrors).toEqual([]);
    expect(s1.machineAccountsSkipped).toBeGreaterThan(0);
    expect(s1.potentialDuplicates).toBeGreaterThan(0);
    expect(s1.skippedSources).toEqual(['Legacy']);
    expect(t.lines.some((l) => l.level === 'warn' && /Source "Legacy" is disabled/.test(l.msg))).toBe(true);
    expect(t.lines.filter((l) => l.level === 'warn' && /machine accounts/.test(l.msg))).toHaveLength(1);
    assertNoDuplicates('login');
    assertNoDuplicates('employeeId');
    const loginByKey = new Map(connectorAccounts().map((a) => [a.nativeIdentity, a.attributes.login]));
    expect(connectorAccounts().every((a) => a.disabled === false)).toBe(true);

    const second = await t.aggregate();
    expect(second).toMatchObject({ created: 0, removed: 0 });
    for (const a of connectorAccounts()) expect(a.attributes.login).toBe(loginByKey.get(a.nativeIdentity));
    expect(connectorAccounts().every((a) => a.disabled === false)).toBe(true);

    // A new source account between runs: the counter continues after the highest issued value.
    const ldap = sim.tenant.sourceByName('LDAP')!;
    const now = sim.tenant.now();
    sim.tenant.addAccount({
      id: sim.tenant.newId(),
      sourceId: ldap.id,
      nativeIdentity: 'NEW-1',
      name: 'zed.quux',
      disabled: false,
      locked: false,
      isMachine: false,
      manuallyCorrelated: false,
      attributes: { firstName: 'Zed', lastName: 'Quux', displayName: 'Zed Quux', email: 'zed@x' },
      created: now,
      modified: now,
    });
    const third = await t.aggregate();
    expect(third.created).toBe(1);
    const zed = connectorAccounts().find((a) => a.attributes.lastName === 'Quux')!;
    expect(zed.attributes.employeeId).toBe(`F${String(first.created + 1).padStart(6, '0')}`);
    assertNoDuplicates('login');
    assertNoDuplicates('employeeId');
  });

  test('Redis wiped between runs (queue mode): no unique value or counter is issued twice', async () => {
    const prefix = `${uniquePrefix('core-e2e')}:`;
    const t = setup({}, { redis, keyPrefix: prefix });
    await t.aggregate();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    const src = sim.tenant.sourceByName('Contractors')!;
    const template = [...sim.tenant.accountsOfSource(src.id).values()].find((a) => !a.isMachine)!;
    sim.tenant.addAccount({
      ...template,
      id: sim.tenant.newId(),
      nativeIdentity: 'CLONE-1',
      attributes: {
        ...template.attributes,
        displayName: 'Totally Different Person',
        firstName: template.attributes.firstName,
      },
    });
    const again = await t.aggregate();
    expect(again.created).toBe(1);
    assertNoDuplicates('login');
    assertNoDuplicates('employeeId');
  });

  test('probabilistic model: a full run stores its parameters on the connector source; after a Redis wipe a limited run reuses them; a full run with too little new data keeps them', async () => {
    const prefix = `${uniquePrefix('core-e2e-prob')}:`;
    const addAccount = (nativeIdentity: string, first: string, last: string) => {
      const ldap = sim.tenant.sourceByName('LDAP')!;
      const now = sim.tenant.now();
      sim.tenant.addAccount({
        id: sim.tenant.newId(),
        sourceId: ldap.id,
        nativeIdentity,
        name: `${first}.${last}`.toLowerCase(),
        disabled: false,
        locked: false,
        isMachine: false,
        manuallyCorrelated: false,
        attributes: {
          firstName: first,
          lastName: last,
          displayName: `${first} ${last}`,
          email: `${first}@${last}.example`,
        },
        created: now,
        modified: now,
      });
    };

    const full = await probabilisticRun({}, { redis, keyPrefix: prefix });
    const stored = full.stored;
    expect(stored).toMatchObject({
      version: 1,
      attributes: PROBABILISTIC.attributes.map((a) => ({ attribute: a.attribute })),
    });
    expect(stored.prior).toBeGreaterThan(0);
    expect(stored.prior).toBeLessThan(1);
    expect(full.summaries[0]!.modelParameters).toEqual({
      source: 'estimated',
      stored: true,
      estimatedAt: stored.estimatedAt,
    });
    // The simulator's planted duplicates reach review with their explanation.
    const candidate = full.summaries[0]!.pendingReviews[0]?.candidates[0];
    expect(candidate?.probability).toBeGreaterThanOrEqual(0.9);
    expect(candidate?.explanation?.map((e) => e.attribute)).toEqual(['displayName', 'email', 'lastName', 'prior']);
    // The listed weights (the prior's included) add up to the match weight, up to their rounding.
    const sum = candidate!.explanation!.reduce((t, e) => t + e.weight, 0);
    expect(Math.abs(sum - candidate!.matchWeight!)).toBeLessThanOrEqual(0.02);

    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    addAccount('PROB-1', 'Quentin', 'Zarkovsky');
    const limited = await probabilisticRun({ aggregationBatchSize: 1000 }, { redis, keyPrefix: prefix });
    expect(limited.summaries[0]!.modelParameters).toEqual({
      source: 'stored',
      stored: false,
      estimatedAt: stored.estimatedAt,
    });
    expect(limited.stored).toEqual(stored);

    // One new account is too little to re-estimate m and the prior: the next full run keeps them.
    addAccount('PROB-2', 'Yolanda', 'Vexmoor');
    const again = await probabilisticRun({}, { redis, keyPrefix: prefix });
    expect(again.summaries[0]!.modelParameters).toEqual({
      source: 'stored',
      stored: false,
      estimatedAt: stored.estimatedAt,
    });
    expect(again.lines.some((l) => /the estimate rests on only 1 new account\(s\)/.test(l.msg))).toBe(true);
    expect(again.stored).toEqual(stored);

    // A full run with nothing new keeps them too.
    const idle = await probabilisticRun({}, { redis, keyPrefix: prefix });
    expect(idle.summaries[0]!.modelParameters).toMatchObject({ source: 'stored', stored: false });
    expect(idle.lines.some((l) => /found no new account to match/.test(l.msg))).toBe(true);
    expect(idle.stored).toEqual(stored);
  });

  test('probabilistic model: a full run with processing batch size 1 estimates and stores the same parameters as one with large batches', async () => {
    const without = ({ estimatedAt: _, ...p }: ModelParameters) => p;

    const large = await probabilisticRun({ enableBatching: true, batchSize: 1000 });
    const byLarge = large.stored;
    expect(large.summaries[0]!.modelParameters).toMatchObject({ source: 'estimated', stored: true });
    expect(byLarge.extra?.candidatePairs).toBeGreaterThan(0);

    resetTenantState();
    const one = await probabilisticRun({ enableBatching: true, batchSize: 1 });
    const byOne = one.stored;
    expect(one.summaries[0]!.modelParameters).toMatchObject({ source: 'estimated', stored: true });
    expect(byOne.estimatedAt).not.toBe(byLarge.estimatedAt);
    expect(byOne.prior).toBeCloseTo(byLarge.prior, 6);
    expect(without(byOne)).toEqual(without(byLarge));
    // (Which accounts go to review may still differ: an account sent to review is no candidate for
    // the accounts of later batches.)
    expect(one.summaries[0]!.potentialDuplicates).toBeGreaterThan(0);
  });

  test('two aggregations at once never overlap (the second waits for the first, or is refused after the wait); a stale flag is cleared with an error, then the next run proceeds', async () => {
    const t = setup();
    const results = await Promise.allSettled([t.aggregate(), t.aggregate()]);
    const rejected = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    expect(rejected.length).toBeLessThanOrEqual(1);
    for (const r of rejected)
      expect(String(r.reason)).toMatch(/Another aggregation of source "Identity Fusion" is in progress/);

    const src = sim.tenant.source(sim.tenant.meta.fusionSourceId!);
    sim.tenant.replaceSource({
      ...src,
      connectorAttributes: {
        ...src.connectorAttributes,
        processing: { runId: 'crashed', startedAt: '2026-01-01T00:00:00Z' },
      },
    });
    await expect(t.aggregate()).rejects.toThrow(
      /did not finish .*confirm that no other aggregation of this source is running/,
    );
    expect(sim.tenant.source(src.id).connectorAttributes.processing ?? null).toBeNull();
    await expect(t.aggregate()).resolves.toMatchObject({ removed: 0 });
  });

  test('a cancelled aggregation takes its processing flag down: the next run proceeds', async () => {
    const t = setup({ batchSize: 5 });
    const runner = createProductionRunner({ taskPollMs: 100 });
    const abort = new AbortController();
    const iter = runner('std:account:list', {}, configFor({ batchSize: 5 }), context([], abort.signal))[
      Symbol.asyncIterator
    ]();
    expect((await iter.next()).done).toBe(false);
    expect(sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes.processing).toBeTruthy();
    abort.abort();
    await expect(
      (async () => {
        while (!(await iter.next()).done);
      })(),
    ).rejects.toMatchObject({ code: 'COMMAND_CANCELLED' });
    expect(sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes.processing ?? null).toBeNull();
    await expect(t.aggregate()).resolves.toMatchObject({ removed: 0 });
  });

  test('Reset accounts? deletes and rebuilds the connector accounts once, in a run that reads every configured source', async () => {
    const t = setup();
    const first = await t.aggregate();
    const before = new Set(connectorAccounts().map((a) => a.nativeIdentity));
    // Legacy is configured but disabled: its accounts could not be rebuilt, so the reset waits.
    const waiting = await setup({ reset: true }).aggregate();
    expect(waiting).toMatchObject({ created: 0, removed: 0 });
    expect(sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes.reset).not.toBe(false);
    // The operator takes the disabled source out of the list: now the run reads every configured source.
    const r = setup({ reset: true, sources: ['Contractors', 'LDAP'] });
    const rebuilt = await r.aggregate();
    expect(rebuilt.removed).toBe(first.created);
    expect(rebuilt.created).toBe(first.created);
    expect(connectorAccounts().some((a) => before.has(a.nativeIdentity))).toBe(false);
    expect(sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes.reset).toBe(false);
    assertNoDuplicates('employeeId');
    const next = await r.aggregate();
    expect(next).toMatchObject({ created: 0, removed: 0 });
  });

  test('forced aggregation waits for the task, fails clearly on failure and timeout; aggregation batch size and account filter', async () => {
    const ldap = sim.tenant.sourceByName('LDAP')!;
    const forced = setup({ sourceOptions: { LDAP: { forceAggregation: true } }, provisioningTimeout: 1 });
    const collect = async (cfg: ReturnType<typeof setup>) => {
      const out: CommandOutput[] = [];
      for await (const item of cfg.invoke('std:account:list', {})) out.push(item);
      return out;
    };
    sim.control.setAggregationOutcome(ldap.id, { kind: 'succeed', afterPolls: 1 });
    expect((await collect(forced)).length).toBeGreaterThan(0);
    sim.control.setAggregationOutcome(ldap.id, { kind: 'fail', afterPolls: 1, message: 'LDAP server unreachable' });
    await expect(collect(forced)).rejects.toThrow(
      /Forced aggregation of source "LDAP" ended with ERROR.*LDAP server unreachable/,
    );
    sim.control.setAggregationOutcome(ldap.id, { kind: 'never' });
    await expect(collect(forced)).rejects.toThrow(/did not finish within the provisioning timeout of 1 s/);
    sim.control.setAggregationOutcome(ldap.id, { kind: 'succeed', afterPolls: 1 });

    const limited = setup({ aggregationBatchSize: 7 });
    expect(await collect(limited)).toHaveLength(limited.summaries[0]!.accountsCreated);
    const l = limited.summaries[0]!;
    // At most 7 accounts processed (waiting ones are not processed: how many of them are read depends
    // on the forms earlier tests left, e.g. a cancelled run now leaves none).
    expect(l.accountsCreated + l.potentialDuplicates).toBeGreaterThan(0);
    expect(l.accountsCreated + l.potentialDuplicates).toBeLessThanOrEqual(7);
    const read = Object.values(l.accountsPerSource).reduce((a, b) => a + b, 0);
    expect(l.accountsCreated + l.potentialDuplicates + l.awaitingReview).toBeLessThanOrEqual(read);
    expect(limited.summaries[0]!.limitedTo).toBe(7);

    const filtered = setup({ accountFilter: 'attributes.department eq "Engineering"', matching: undefined });
    const items = await collect(filtered);
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => (i.attributes as Record<string, unknown>).department === 'Engineering')).toBe(true);
    expect(filtered.summaries[0]!.filteredOut).toBeGreaterThan(0);
  });

  test('review forms: a potential duplicate waits; "not a duplicate" creates it; "same person as" correlates it', async () => {
    const t = setup();
    await t.aggregate();
    const review = t.summaries[0]!.review as { formsCreated: number; created: { accountId: string }[] };
    expect(review.formsCreated).toBe(t.summaries[0]!.potentialDuplicates);
    expect(review.formsCreated).toBeGreaterThan(1);
    // A second run does not match them again nor create new forms.
    await t.aggregate();
    expect(t.summaries[1]).toMatchObject({ accountsCreated: 0, potentialDuplicates: 0 });
    expect(t.summaries[1]!.awaitingReview).toBe(review.formsCreated);

    const instances = [...sim.tenant.formInstances.values()] as Record<string, unknown>[];
    const instanceOf = (accountId: string) =>
      instances.find((i) => JSON.stringify(i.formInput ?? {}).includes(accountId))!;
    const [a, b] = review.created.map((c) => c.accountId);
    const instA = instanceOf(a!);
    const instB = instanceOf(b!);
    sim.control.completeFormInstance(String(instA.id), { newIdentity: true });
    const candidates = JSON.parse(String((instB.formInput as Record<string, unknown>).candidates)) as {
      id: string;
      kind: string;
    }[];
    const target = candidates.find((c) => c.kind === 'identity')!;
    sim.control.completeFormInstance(String(instB.id), { newIdentity: false, identity: target.id });

    const applied = await t.aggregate();
    expect(applied.created).toBe(2);
    const made = connectorAccounts().filter((x) =>
      (x.attributes.accounts as string[]).some((id) => id === a || id === b),
    );
    expect(made).toHaveLength(2);
    const linked = made.find((x) => (x.attributes.accounts as string[]).includes(b!))!;
    expect(linked.identityId).toBe(target.id);
    expect(t.summaries[2]!.awaitingReview).toBe(review.formsCreated - 2);
  });

  test('single-account commands use a constant number of requests; test connection and schema work', async () => {
    const t = setup();
    await t.aggregate();
    const key = connectorAccounts()[0]!.nativeIdentity;
    sim.control.resetLog();
    const out: CommandOutput[] = [];
    for await (const item of t.invoke('std:account:disable', { identity: key })) out.push(item);
    expect(out[0]).toMatchObject({ identity: key, disabled: true });
    const requests = sim.control.counters().requests;
    expect(requests).toBeLessThanOrEqual(4);

    const status: CommandOutput[] = [];
    for await (const item of t.invoke('std:test-connection', {})) status.push(item);
    expect(status[0]?.status).toBe('success');

    const schema: CommandOutput[] = [];
    for await (const item of t.invoke('std:account:discover-schema', {})) schema.push(item);
    const names = (schema[0]?.attributes as { name: string }[]).map((a) => a.name);
    expect(names).toEqual(expect.arrayContaining(['id', 'name', 'accounts', 'login', 'employeeId', 'displayName']));
  });
});
