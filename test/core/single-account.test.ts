import {
  createAccountCreateCommand,
  createAccountDisableCommand,
  createAccountEnableCommand,
  createAccountListCommand,
  createAccountReadCommand,
  createAccountUpdateCommand,
} from '../../src/core/commands/account-commands';
import { createDiscoverSchemaCommand, createEntitlementListCommand } from '../../src/core/commands/schema-commands';
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import type { LogSink, LogRecord } from '../../src/core/ports/log-sink';
import { collect, failure, harness, run, type Harness, type LogLine } from './support';

async function aggregated(extra: Record<string, unknown> = {}): Promise<Harness & { items: AccountItem[] }> {
  const h = harness({
    attributeMaps: [{ newAttribute: 'allGroups', existingAttributes: ['groups'], attributeMerge: 'list' }],
    attributeDefinitions: [
      { name: 'uid', expression: '$firstName.toLowerCase()', type: 'unique' },
      { name: 'displayName', expression: '$firstName $lastName' },
      { name: 'label', expression: '$firstName', refresh: true },
      { name: 'empNo', expression: '$counter', type: 'counter' },
    ],
    ...extra,
  });
  const contractors = h.fake.addSource('Contractors');
  const ldap = h.fake.addSource('LDAP');
  h.fake.schemas.set(contractors.id, [
    {
      name: 'account',
      nativeObjectType: 'account',
      attributes: [
        { name: 'firstName', type: 'STRING', multi: false, entitlement: false },
        { name: 'lastName', type: 'STRING', multi: false, entitlement: false },
        { name: 'groups', type: 'STRING', multi: true, entitlement: true },
        { name: 'level', type: 'INT', multi: false, entitlement: false },
      ],
    },
  ]);
  h.fake.schemas.set(ldap.id, [
    {
      name: 'account',
      nativeObjectType: 'account',
      attributes: [
        { name: 'firstName', type: 'STRING', multi: false, entitlement: false, description: 'LDAP given name' },
      ],
    },
  ]);
  h.fake.addAccount(contractors, 'C1', { firstName: 'Ada', lastName: 'Lovelace', groups: ['g1', 'g2'] });
  h.fake.addAccount(ldap, 'L1', { firstName: 'Alan', lastName: 'Turing', groups: ['g2', 'g3'] });
  const items = (await collect(run(createAccountListCommand(h.deps), h))) as AccountItem[];
  for (const { created } of [h.fake.ingest(h.own.id, items)]) expect(created).toHaveLength(2);
  return { ...h, items };
}

describe('single-account commands', () => {
  test('enable turns a new, disabled account on with a constant number of platform calls; disable turns it off', async () => {
    const h = await aggregated();
    const key = h.items[0]!.identity;
    for (const k of Object.keys(h.fake.calls)) delete h.fake.calls[k];
    const [enabled] = (await collect(run(createAccountEnableCommand(h.deps), h, { identity: key }))) as AccountItem[];
    expect(enabled).toMatchObject({ identity: key, disabled: false });
    expect(h.fake.calls.listAccounts).toBeUndefined();
    expect(h.fake.calls.findAccountByNativeIdentity).toBe(1);
    expect(h.fake.totalCalls()).toBeLessThanOrEqual(3);
    const [disabled] = (await collect(
      run(createAccountDisableCommand(h.deps), h, { key: { simple: { id: key } } }),
    )) as AccountItem[];
    expect(disabled?.disabled).toBe(true);
  });

  test('read returns the account; an unknown identity is ACCOUNT_NOT_FOUND', async () => {
    const h = await aggregated();
    const [item] = (await collect(
      run(createAccountReadCommand(h.deps), h, { identity: h.items[1]!.identity }),
    )) as AccountItem[];
    expect(item?.attributes.uid).toBe(h.items[1]!.attributes.uid);
    const e = await failure(run(createAccountReadCommand(h.deps), h, { identity: 'nope' }));
    expect(e.code).toBe('ACCOUNT_NOT_FOUND');
    expect((await failure(run(createAccountReadCommand(h.deps), h, {}))).code).toBe('INPUT_INVALID');
  });

  test('update changes a normal definition attribute and rejects unsupported changes clearly', async () => {
    const h = await aggregated();
    const identity = h.items[0]!.identity;
    const update = (changes: unknown[]) => run(createAccountUpdateCommand(h.deps), h, { identity, changes });
    const [item] = (await collect(
      update([{ op: 'Set', attribute: 'displayName', value: 'Countess Ada' }]),
    )) as AccountItem[];
    expect(item?.attributes.displayName).toBe('Countess Ada');
    const cases: [unknown, RegExp][] = [
      [
        { op: 'Set', attribute: 'uid', value: 'x' },
        /Cannot change attribute "uid".*generated unique value, issued once and never changed/,
      ],
      [{ op: 'Set', attribute: 'label', value: 'x' }, /recomputed on every aggregation/],
      [{ op: 'Set', attribute: 'allGroups', value: 'x' }, /merged from the sources \(groups\)/],
      [{ op: 'Set', attribute: 'lastName', value: 'x' }, /comes from the authoritative sources/],
      [{ op: 'Set', attribute: 'accounts', value: [] }, /maintained by the connector/],
      [{ op: 'Add', attribute: 'displayName', value: 'x' }, /Cannot Add attribute "displayName".*single-valued/],
    ];
    for (const [change, message] of cases) {
      const e = await failure(update([change]));
      expect(e.code).toBe('UNSUPPORTED_CHANGE');
      expect(e.message).toMatch(message);
    }
  });

  test('create issues counters (persisted) and returns an account; unique values wait for the next aggregation', async () => {
    const h = await aggregated();
    const before = h.fake.calls.listAccounts ?? 0;
    const lines: LogLine[] = [];
    const input = { attributes: { firstName: 'Bob', lastName: 'Ross', uid: 'ada', empNo: '1' } };
    const [item] = (await collect(run(createAccountCreateCommand(h.deps), h, input, lines))) as AccountItem[];
    expect(item?.attributes).toMatchObject({ firstName: 'Bob', empNo: '3', accounts: [] });
    // A given value of a generated attribute could duplicate one an account holds: it is ignored, with a warning.
    expect(item?.attributes.uid).toBeUndefined();
    expect(
      lines.some(
        (l) => l.level === 'warn' && /Ignored the given values of generated attributes uid, empNo/.test(l.msg),
      ),
    ).toBe(true);
    expect(
      lines.some(
        (l) =>
          l.level === 'info' && /attributes uid, displayName, label are generated by the next aggregation/.test(l.msg),
      ),
    ).toBe(true);
    expect(h.fake.calls.listAccounts ?? 0).toBe(before);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 3 });
    const source = h.fake.sources.get(h.own.id)!;
    h.fake.addAccount(source, item!.identity, item!.attributes, { disabled: false });
    const next = (await collect(run(createAccountListCommand(h.deps), h))) as AccountItem[];
    const completed = next.find((i) => i.identity === item!.identity);
    expect(completed?.attributes).toMatchObject({ uid: 'bob', displayName: 'Bob Ross', empNo: '3' });
  });
});

describe('create and counters under concurrency', () => {
  test('concurrent creates never issue the same counter value; a create during an aggregation leaves its counter to the next one', async () => {
    const h = await aggregated();
    const creates = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        collect(run(createAccountCreateCommand(h.deps), h, { attributes: { firstName: `P${i}` } })),
      ),
    );
    const issued = creates.map((c) => (c[0] as AccountItem).attributes.empNo);
    expect(new Set(issued).size).toBe(5);
    expect(issued.map(Number).sort()).toEqual([3, 4, 5, 6, 7]);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 7 });

    // An aggregation holds the source's lock: the create does not wait for it and issues no counter.
    const key = `${new URL(String(h.config.baseurl)).host}:${h.own.id}`;
    expect(await h.deps.runLock.acquire(key, 'aggregation-run', 60_000)).toBe(true);
    const lines: LogLine[] = [];
    const [item] = (await collect(
      run(
        createAccountCreateCommand({ ...h.deps, createLockWaitMs: 50 }),
        h,
        { attributes: { firstName: 'Late' } },
        lines,
      ),
    )) as AccountItem[];
    expect(item?.attributes.empNo).toBeUndefined();
    expect(
      lines.some(
        (l) => l.level === 'warn' && /counter values of this account are issued by the next aggregation/.test(l.msg),
      ),
    ).toBe(true);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 7 });
    await h.deps.runLock.release(key, 'aggregation-run');
  });

  test('with the concurrency check off (aggregations take no lock), a create leaves its counters to the next aggregation', async () => {
    const h = await aggregated({ concurrencyCheckEnabled: false, batchSize: 1 });
    const contractors = [...h.fake.sources.values()].find((s) => s.name === 'Contractors')!;
    h.fake.addAccount(contractors, 'C-new', { firstName: 'Neo', lastName: 'Anderson' });
    const agg = run(createAccountListCommand(h.deps), h)[Symbol.asyncIterator]();
    expect((await agg.next()).done).toBe(false);
    const lines: LogLine[] = [];
    const [created] = (await collect(
      run(createAccountCreateCommand(h.deps), h, { attributes: { firstName: 'Mid' } }, lines),
    )) as AccountItem[];
    const rest: AccountItem[] = [];
    for (let r = await agg.next(); !r.done; r = await agg.next()) rest.push(r.value as AccountItem);
    expect(created?.attributes.empNo).toBeUndefined();
    expect(
      lines.some(
        (l) => l.level === 'warn' && /Enable concurrency check\? is off.*issued by the next aggregation/.test(l.msg),
      ),
    ).toBe(true);
    const neo = rest.find((i) => i.attributes.firstName === 'Neo')!;
    expect(neo.attributes.empNo).toBe('3');
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.fusionCounters).toEqual({ empNo: 3 });
  });
});

describe('schema and entitlements', () => {
  test('discover-schema: own attributes, source schemas, list merge = multi-valued entitlement, definitions', async () => {
    const h = await aggregated();
    const [schema] = await collect(run(createDiscoverSchemaCommand(h.deps), h));
    const attrs = (
      schema as {
        attributes: { name: string; type: string; multi: boolean; entitlement: boolean; description: string }[];
      }
    ).attributes;
    const by = (n: string) => attrs.find((a) => a.name === n);
    expect(schema).toMatchObject({ identityAttribute: 'id', displayAttribute: 'name', groupAttribute: 'allGroups' });
    expect(by('allGroups')).toMatchObject({ multi: true, entitlement: true });
    expect(by('level')).toMatchObject({ type: 'int', multi: false });
    expect(by('firstName')?.description).toBe('firstName from Contractors');
    expect(by('uid')).toMatchObject({ type: 'string', multi: false, entitlement: false });
    expect(by('accounts')).toMatchObject({ multi: true });
  });

  test('entitlement list: distinct values of the entitlement-type attributes', async () => {
    const h = await aggregated();
    const items = await collect(run(createEntitlementListCommand(h.deps), h, { type: 'group' }));
    expect(items.map((i) => i.identity).sort()).toEqual(['g1', 'g2', 'g3']);
    expect(items[0]).toMatchObject({ type: 'group', attributes: { attribute: 'allGroups' } });
    expect(await collect(run(createEntitlementListCommand(h.deps), h, { type: 'other' }))).toHaveLength(0);
  });
});

describe('logging', () => {
  class MemorySink implements LogSink {
    readonly records: LogRecord[] = [];
    closed = false;
    write(r: LogRecord): void {
      this.records.push(r);
    }
    async close(): Promise<void> {
      this.closed = true;
    }
  }

  test('logLevel filters the command logger; the external sink gets records at or above its level; secrets never appear', async () => {
    const sink = new MemorySink();
    const h = harness({
      logLevel: 'Warn',
      externalLoggingEnabled: true,
      externalLoggingUrl: 'http://logs.example.com',
      externalLoggingLevel: 'Info',
    });
    h.deps.externalLogSink = () => sink;
    const ldap = h.fake.addSource('LDAP');
    h.fake.addSource('Contractors');
    h.fake.addAccount(ldap, 'svc', { firstName: 'x' }, { isMachine: true });
    const lines: LogLine[] = [];
    await collect(run(createAccountListCommand(h.deps), h, {}, lines));
    expect(lines.every((l) => l.level === 'warn' || l.level === 'error')).toBe(true);
    expect(lines.some((l) => /machine accounts/.test(l.msg))).toBe(true);
    expect(sink.records.some((r) => r.level === 'info' && r.msg === 'Aggregation finished')).toBe(true);
    expect(sink.records.some((r) => r.level === 'debug')).toBe(false);
    expect(sink.closed).toBe(true);
    const everything = JSON.stringify([lines, sink.records]);
    expect(everything).not.toContain('top-secret-value');
  });

  test('Debug shows everything', async () => {
    const h = harness({ logLevel: 'debug' });
    h.fake.addSource('LDAP');
    h.fake.addSource('Contractors');
    const lines: LogLine[] = [];
    await collect(run(createAccountListCommand(h.deps), h, {}, lines));
    expect(lines.some((l) => l.level === 'debug')).toBe(true);
  });
});
