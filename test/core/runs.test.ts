import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import { sourceLockKey } from '../../src/core/ports/run-lock';
import { collect, failure, harness, run, type Harness, type LogLine } from './support';

const definitions = [
  { name: 'uid', expression: '$firstName.toLowerCase()', type: 'unique' },
  { name: 'empNo', expression: 'F$counter', type: 'counter', digits: 5 },
];

function tenant(
  extra: Record<string, unknown> = {},
): Harness & { contractors: ReturnType<Harness['fake']['addSource']> } {
  const h = harness({ attributeDefinitions: definitions, ...extra });
  const contractors = h.fake.addSource('Contractors');
  h.fake.addSource('LDAP');
  for (const [n, first] of ['ann', 'ann', 'bob'].entries())
    h.fake.addAccount(contractors, `C${n}`, { firstName: first });
  return { ...h, contractors };
}

const list = (h: Harness, config = h.config) =>
  collect(run(createAccountListCommand(h.deps), h, {}, [], config)) as Promise<AccountItem[]>;
const values = (items: AccountItem[], attr: string) => items.map((i) => i.attributes[attr]).sort();

describe('consecutive aggregations (fake platform)', () => {
  test('three runs: unique values and keys kept, counters continue, nothing re-issued', async () => {
    const h = tenant();
    const first = await list(h);
    expect(values(first, 'uid')).toEqual(['ann', 'ann1', 'bob']);
    expect(values(first, 'empNo')).toEqual(['F00001', 'F00002', 'F00003']);
    h.fake.ingest(h.own.id, first);

    h.fake.addAccount(h.contractors, 'C9', { firstName: 'ann' });
    const second = await list(h);
    expect(second).toHaveLength(4);
    const kept = second.filter((i) => first.some((f) => f.identity === i.identity));
    expect(kept).toHaveLength(3);
    for (const k of kept) expect(k.attributes.uid).toBe(first.find((f) => f.identity === k.identity)?.attributes.uid);
    const added = second.find((i) => !first.some((f) => f.identity === i.identity))!;
    expect(added.attributes).toMatchObject({ uid: 'ann2', empNo: 'F00004' });
    h.fake.ingest(h.own.id, second);

    const third = await list(h);
    expect(third.map((i) => i.identity).sort()).toEqual(second.map((i) => i.identity).sort());
    expect(new Set(values(third, 'uid')).size).toBe(4);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 4 });
  });

  test('counters are persisted to the platform before the accounts using them are emitted', async () => {
    const h = tenant();
    const iter = run(createAccountListCommand(h.deps), h)[Symbol.asyncIterator]();
    const firstItem = await iter.next();
    expect(firstItem.done).toBe(false);
    const persisted = h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters as Record<string, number>;
    const emitted = Number(String((firstItem.value as AccountItem).attributes.empNo).slice(1));
    expect(persisted.empNo).toBeGreaterThanOrEqual(emitted);
    while (!(await iter.next()).done);
  });

  test('counters are written ahead: 40 batches of one account, 6 writes, each covering the accounts emitted, the exact value last', async () => {
    const h = tenant({ enableBatching: false });
    for (let n = 3; n < 40; n++) h.fake.addAccount(h.contractors, `C${n}`, { firstName: `p${n}` });
    const persisted = (): number =>
      (h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters as Record<string, number>).empNo!;
    const seen: number[] = [];
    for await (const item of run(createAccountListCommand(h.deps), h)) {
      const emitted = Number(String((item as AccountItem).attributes.empNo).slice(1));
      expect(persisted()).toBeGreaterThanOrEqual(emitted);
      seen.push(persisted());
    }
    // The first write is exact, each later one covers as many values again: 1, 4, 10, 22, 46, then 40 at the end.
    expect([...new Set(seen)]).toEqual([1, 4, 10, 22, 46]);
    expect(persisted()).toBe(40);
    expect(h.summaries[0]?.counterFlushes).toBe(6);
    const batched = tenant();
    await list(batched);
    expect(batched.summaries[0]?.counterFlushes).toBe(1);
  });

  test('the run loses its lock after its last account: it fails, and the counters keep the block it wrote ahead', async () => {
    const h = tenant({ enableBatching: false });
    for (let n = 3; n < 40; n++) h.fake.addAccount(h.contractors, `C${n}`, { firstName: `p${n}` });
    const key = sourceLockKey('acme.api.example.com', h.own.id);
    const iter = run(createAccountListCommand(h.deps), h)[Symbol.asyncIterator]();
    for (let n = 0; n < 40; n++) expect((await iter.next()).done).toBe(false);
    await h.deps.runLock.release(key, (await h.deps.runLock.holder(key))!);
    expect(await h.deps.runLock.acquire(key, 'other-run', 60_000)).toBe(true);
    await expect(iter.next()).rejects.toMatchObject({ code: 'AGGREGATION_LOCK_LOST' });
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 46 });
  });

  test('the exact values cannot be written back, or another run wrote since: a warning, the run ends, no value lowered', async () => {
    for (const trouble of ['platform down', 'another run'] as const) {
      const h = tenant({ enableBatching: false });
      for (let n = 3; n < 12; n++) h.fake.addAccount(h.contractors, `C${n}`, { firstName: `p${n}` });
      const counters = () => h.fake.sources.get(h.own.id)!.connectorAttributes;
      const patch = h.fake.patchSourceConnectorAttributes.bind(h.fake);
      let emitted = 0;
      h.fake.patchSourceConnectorAttributes = async (id: string, attributes: Record<string, unknown>) => {
        if (emitted === 12 && 'fusionCounters' in attributes) throw new Error('platform down');
        return patch(id, attributes);
      };
      const lines: LogLine[] = [];
      for await (const _ of run(createAccountListCommand(h.deps), h, {}, lines)) {
        // After the last account, before the run's end: the block written ahead (22) is what the source holds.
        if (++emitted === 12 && trouble === 'another run') counters().fusionCounters = { empNo: 30 };
      }
      expect(emitted).toBe(12);
      expect(h.summaries[0]?.accountsCreated).toBe(12);
      const warned = lines.filter((l) => l.level === 'warn').map((l) => l.msg);
      expect(
        warned.filter((m) =>
          m.startsWith(
            trouble === 'platform down' ? 'Could not write the counters back' : 'The counters on the source changed',
          ),
        ),
      ).toHaveLength(1);
      expect(counters().fusionCounters).toEqual({ empNo: trouble === 'platform down' ? 22 : 30 });
    }
  });

  test('a run that stops half-way leaves the values it wrote ahead unused: the next run goes on after them, none issued twice', async () => {
    const h = tenant({ enableBatching: false });
    for (let n = 3; n < 20; n++) h.fake.addAccount(h.contractors, `C${n}`, { firstName: `p${n}` });
    const first: AccountItem[] = [];
    for await (const item of run(createAccountListCommand(h.deps), h)) {
      first.push(item as AccountItem);
      if (first.length === 12) break;
    }
    // 12 issued, 22 written (the block written at the 11th), nothing released.
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 22 });
    h.fake.ingest(h.own.id, first);
    const second = await list(h);
    const fresh = second.filter((i) => !first.some((f) => f.identity === i.identity));
    expect(fresh).toHaveLength(8);
    expect(values(fresh, 'empNo')).toEqual(Array.from({ length: 8 }, (_, i) => `F000${23 + i}`));
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 30 });
  });

  test('lost connector state (counters wiped) never re-issues a value: the registry is rebuilt from the accounts', async () => {
    const h = tenant();
    h.fake.ingest(h.own.id, await list(h));
    h.fake.sources.get(h.own.id)!.connectorAttributes.fusionCounters = {};
    h.fake.addAccount(h.contractors, 'C7', { firstName: 'cy' });
    const next = await list(h);
    expect(next.find((i) => i.attributes.uid === 'cy')?.attributes.empNo).toBe('F00004');
  });

  test('Reset accounts? rebuilds every connector account once, then clears itself on the source', async () => {
    const h = tenant();
    const first = await list(h);
    h.fake.ingest(h.own.id, first);
    const resetConfig = { ...h.config, reset: true };
    const rebuilt = await list(h, resetConfig);
    expect(rebuilt).toHaveLength(3);
    expect(rebuilt.some((i) => first.some((f) => f.identity === i.identity))).toBe(false);
    expect(values(rebuilt, 'empNo')).toEqual(['F00001', 'F00002', 'F00003']);
    expect(h.summaries[1]).toMatchObject({ reset: true, accountsReset: 3, accountsCreated: 3 });
    h.fake.ingest(h.own.id, rebuilt);
    expect(
      h.fake
        .accountsOf(h.own.id)
        .map((a) => a.nativeIdentity)
        .sort(),
    ).toEqual(rebuilt.map((i) => i.identity).sort());
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.reset).toBe(false);
    // The platform may still send reset: true in the config; the cleared flag on the source wins.
    const after = await list(h, resetConfig);
    expect(after.map((i) => i.identity).sort()).toEqual(rebuilt.map((i) => i.identity).sort());
  });
});

describe('limited and filtered runs', () => {
  test('Reset accounts? waits for a full run: a limited or filtered run resets nothing and keeps the flag', async () => {
    const h = tenant();
    const first = await list(h);
    h.fake.ingest(h.own.id, first);
    for (const limited of [{ aggregationBatchSize: 1 }, { accountFilter: 'attributes.firstName eq "bob"' }]) {
      const out = await list(h, { ...h.config, reset: true, ...limited });
      expect(h.summaries.at(-1)).toMatchObject({ reset: false, accountsReset: 0 });
      // Whatever the run emitted kept its key: nothing was dropped and rebuilt.
      for (const item of out) expect(first.map((f) => f.identity)).toContain(item.identity);
      expect(h.fake.sources.get(h.own.id)?.connectorAttributes.reset).not.toBe(false);
    }
    const full = await list(h, { ...h.config, reset: true });
    expect(h.summaries.at(-1)).toMatchObject({ reset: true, accountsReset: 3 });
    expect(full.some((i) => first.some((f) => f.identity === i.identity))).toBe(false);
  });

  test('Reset accounts? while a configured source is disabled deletes none of its connector accounts, and waits', async () => {
    const h = tenant();
    const ldap = [...h.fake.sources.values()].find((s) => s.name === 'LDAP')!;
    h.fake.addAccount(ldap, 'L1', { firstName: 'lee' });
    const first = await list(h);
    expect(values(first, 'uid')).toEqual(['ann', 'ann1', 'bob', 'lee']);
    h.fake.ingest(h.own.id, first);
    ldap.enabled = false;
    const out = await list(h, { ...h.config, reset: true });
    expect(h.summaries.at(-1)).toMatchObject({ reset: false, accountsReset: 0 });
    // Every connector account is still emitted with its key, the disabled source's included.
    expect(out.map((i) => i.identity).sort()).toEqual(first.map((i) => i.identity).sort());
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.reset).not.toBe(false);
    ldap.enabled = true;
    await list(h, { ...h.config, reset: true });
    expect(h.summaries.at(-1)).toMatchObject({ reset: true, accountsReset: 4 });
  });

  test('an account no source account refreshed keeps its refresh values, even when they read $sources', async () => {
    const h = tenant({
      attributeDefinitions: [
        ...definitions,
        { name: 'origin', expression: '$sources.Contractors.get(0).firstName', refresh: true },
      ],
    });
    const first = await list(h);
    expect(values(first, 'origin')).toEqual(['ann', 'ann', 'bob']);
    h.fake.ingest(h.own.id, first);
    const limited = await list(h, { ...h.config, aggregationBatchSize: 1 });
    expect(limited.length).toBeGreaterThan(1);
    for (const item of limited)
      expect(item.attributes.origin).toBe(first.find((f) => f.identity === item.identity)?.attributes.origin);
  });
});

describe('run lock and processing flag', () => {
  test('two aggregations at once: one refuses with "another aggregation is in progress"', async () => {
    const h = tenant();
    const a = run(createAccountListCommand(h.deps), h)[Symbol.asyncIterator]();
    await a.next();
    const e = await failure(run(createAccountListCommand(h.deps), h));
    expect(e.code).toBe('AGGREGATION_IN_PROGRESS');
    expect(e.message).toMatch(/Another aggregation of source "Identity Fusion" is in progress/);
    while (!(await a.next()).done);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toBeNull();
    expect(await list(h)).toHaveLength(3);
  });

  test('a stale processing flag is cleared, the run asks for confirmation, the next run proceeds', async () => {
    const h = tenant();
    h.fake.sources.get(h.own.id)!.connectorAttributes.processing = {
      runId: 'crashed-run',
      startedAt: '2026-01-01T00:00:00Z',
    };
    const e = await failure(run(createAccountListCommand(h.deps), h));
    expect(e.code).toBe('AGGREGATION_STALE_FLAG');
    expect(e.message).toMatch(
      /did not finish \(processing flag set by run crashed-run.*confirm that no other aggregation of this source is running/,
    );
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toBeNull();
    expect(await list(h)).toHaveLength(3);
  });

  test('a flag left by a run of this deployment (its lock scope) that died is replaced: the next run proceeds at once', async () => {
    const h = tenant();
    const scope = await h.deps.runLock!.scope();
    // What a worker killed mid-run leaves: its flag, and a lock that has since expired.
    h.fake.sources.get(h.own.id)!.connectorAttributes.processing = {
      runId: 'killed-run',
      startedAt: '2026-01-01T00:00:00Z',
      scope,
    };
    expect(await list(h)).toHaveLength(3);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toBeNull();
  });

  test('a flag of another lock scope (another deployment, or from before a Redis wipe) still asks for confirmation', async () => {
    const h = tenant();
    h.fake.sources.get(h.own.id)!.connectorAttributes.processing = {
      runId: 'elsewhere',
      startedAt: '2026-01-01T00:00:00Z',
      scope: 'redis:another-deployment',
    };
    expect((await failure(run(createAccountListCommand(h.deps), h))).code).toBe('AGGREGATION_STALE_FLAG');
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toBeNull();
    expect(await list(h)).toHaveLength(3);
  });

  test("a running aggregation's flag names its lock scope", async () => {
    const h = tenant();
    const iter = run(createAccountListCommand(h.deps), h)[Symbol.asyncIterator]();
    await iter.next();
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toMatchObject({
      scope: await h.deps.runLock!.scope(),
    });
    while (!(await iter.next()).done);
  });

  test('a failing run clears its own flag and releases the lock', async () => {
    const h = tenant({ attributeDefinitions: [{ name: 'x', expression: '$missing' }] });
    expect((await failure(run(createAccountListCommand(h.deps), h))).code).toBe('TEMPLATE_ERROR');
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toBeNull();
    expect((await failure(run(createAccountListCommand(h.deps), h))).code).toBe('TEMPLATE_ERROR');
  });

  test('a run whose lock was taken by another run fails with AGGREGATION_LOCK_LOST and emits nothing more', async () => {
    const h = tenant({ batchSize: 1 });
    const key = sourceLockKey('acme.api.example.com', h.own.id);
    const iter = run(createAccountListCommand(h.deps), h)[Symbol.asyncIterator]();
    expect((await iter.next()).done).toBe(false);
    const token = (await h.deps.runLock.holder(key))!;
    expect(token).toBeDefined();
    // Another run takes the lock (as after an expiry): this one must stop before emitting more.
    await h.deps.runLock.release(key, token);
    expect(await h.deps.runLock.acquire(key, 'other-run', 60_000)).toBe(true);
    h.fake.sources.get(h.own.id)!.connectorAttributes.processing = { runId: 'other-run' };
    const e = await iter.next().then(
      (r) => new Error(`emitted ${JSON.stringify(r.value)}`),
      (err: unknown) => err,
    );
    expect(e).toMatchObject({ code: 'AGGREGATION_LOCK_LOST' });
    // The other run's lock and flag are left alone.
    expect(await h.deps.runLock.holder(key)).toBe('other-run');
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toEqual({ runId: 'other-run' });
  });

  test('with the concurrency check off, the lock and the flag are bypassed', async () => {
    const h = tenant({ concurrencyCheckEnabled: false });
    h.fake.sources.get(h.own.id)!.connectorAttributes.processing = { runId: 'other' };
    const a = run(createAccountListCommand(h.deps), h)[Symbol.asyncIterator]();
    await a.next();
    expect(await list(h)).toHaveLength(3);
    while (!(await a.next()).done);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.processing).toEqual({ runId: 'other' });
  });
});

describe('metrics', () => {
  test('lock attempts by result and accounts emitted are counted', async () => {
    const { registry } = await import('../../src/observability/metrics-registry');
    const value = async (name: string, labels: Record<string, string>) => {
      const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
      return (m?.values ?? []).find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
    };
    const acquired = await value('fusion_lock_attempts_total', { result: 'acquired' });
    const stale = await value('fusion_lock_attempts_total', { result: 'stale' });
    const emitted = await value('fusion_accounts_processed_total', { command: 'std:account:list' });
    const h = tenant();
    await list(h);
    h.fake.sources.get(h.own.id)!.connectorAttributes.processing = { runId: 'x' };
    await failure(run(createAccountListCommand(h.deps), h));
    expect(await value('fusion_lock_attempts_total', { result: 'acquired' })).toBe(acquired + 1);
    expect(await value('fusion_lock_attempts_total', { result: 'stale' })).toBe(stale + 1);
    expect(await value('fusion_accounts_processed_total', { command: 'std:account:list' })).toBe(emitted + 3);
  });
});
