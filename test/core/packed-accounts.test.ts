/**
 * Accounts a run keeps for later are held as JSON text (src/core/aggregation/packed-account.ts): the
 * connector accounts until their source accounts are read, source accounts until the rest of their
 * connector account's are, a full probabilistic run's new accounts until every source is read. What
 * comes out must be what the accounts held, with values of every JSON kind.
 */
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import { ConnectorAccountIndex } from '../../src/core/aggregation/connector-account-index';
import { MAX_SHAPES, RecordPacker } from '../../src/core/aggregation/packed-account';
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { PlatformAccount } from '../../src/core/ports/platform';
import { PENDING_REVIEWS_KEPT, RecordingReviewQueue } from '../../src/core/ports/review-queue';
import { collect, harness, run, type Harness } from './support';

/** Values of every JSON kind, nested, with characters JSON escapes. */
const rich = (i: number): Record<string, unknown> => ({
  text: `Zoë "${i}" \\ \u00e9\u4e2d\n`,
  empty: '',
  int: i,
  float: i + 0.25,
  negative: -i - 1,
  yes: i % 2 === 0,
  nothing: null,
  list: ['a', `b${i}`, 3, false, null],
  nested: { level: { deeper: [{ k: i }], flag: true } },
});

const definitions = [
  { name: 'login', expression: '$firstName.toLowerCase()$lastName.toLowerCase()', type: 'unique' },
  { name: 'empNo', expression: 'E$counter', type: 'counter', digits: 4 },
  { name: 'greeting', expression: 'Hello $firstName', type: 'normal' },
];

const list = (h: Harness, config = h.config): Promise<AccountItem[]> =>
  collect(run(createAccountListCommand(h.deps), h, {}, [], config)) as Promise<AccountItem[]>;

/** Items without what differs between two tenants: the random key (also the name here) and source account ids. */
function comparable(items: AccountItem[]): unknown[] {
  return items
    .map((i) => {
      const { id: _id, name: _name, accounts: _accounts, ...attributes } = i.attributes;
      return { disabled: i.disabled, attributes };
    })
    .sort((a, b) => String(a.attributes.firstName).localeCompare(String(b.attributes.firstName)));
}

function account(id: string, extra: Partial<PlatformAccount> = {}): PlatformAccount {
  return {
    id,
    sourceId: 's',
    sourceName: 'Contractors',
    nativeIdentity: id,
    name: id,
    disabled: false,
    isMachine: false,
    attributes: {},
    ...extra,
  };
}

describe('record packer', () => {
  it('reads back the same keys in the same order with the same values; names are kept once per shape', () => {
    const packer = new RecordPacker();
    const records = [0, 1, 2].map((i) => ({ b: i, ...rich(i), a: `x${i}` }));
    const texts = records.map((r) => packer.pack(r));
    expect(texts.map((t) => packer.unpack(t))).toEqual(records);
    expect(texts.map((t) => Object.keys(packer.unpack(t)))).toEqual(records.map((r) => Object.keys(r)));
    expect(packer.shapeCount).toBe(1);
    expect(texts[0]).not.toContain('employeeNumber');
    expect(texts[0]).not.toContain('"nested"');
    const reordered = { a: 'x', b: 1 };
    expect(Object.keys(packer.unpack(packer.pack(reordered)))).toEqual(['a', 'b']);
    expect(packer.shapeCount).toBe(2);
  });

  it('leaves out what JSON cannot hold, as JSON.stringify does in an object', () => {
    const packer = new RecordPacker();
    const back = packer.unpack(packer.pack({ a: 1, gone: undefined, fn: () => 1, nested: { u: undefined, v: 2 } }));
    expect(back).toStrictEqual({ a: 1, nested: { v: 2 } });
  });

  it('an own "__proto__" key stays an own key and leaves the prototype alone', () => {
    const packer = new RecordPacker();
    const record = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const back = packer.unpack(packer.pack(record));
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect((back as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(back)).toEqual(['__proto__', 'x']);
    expect(JSON.stringify(back)).toBe(JSON.stringify(record));
  });

  it(`past ${MAX_SHAPES} shapes, records of new shapes are packed whole and still read back`, () => {
    const packer = new RecordPacker();
    const texts = Array.from({ length: MAX_SHAPES + 5 }, (_, i) => packer.pack({ [`k${i}`]: i, same: 'v' }));
    expect(packer.shapeCount).toBe(MAX_SHAPES);
    expect(packer.unpack(texts.at(-1)!)).toEqual({ [`k${MAX_SHAPES + 4}`]: MAX_SHAPES + 4, same: 'v' });
    expect(packer.unpack(texts[0]!)).toEqual({ k0: 0, same: 'v' });
  });

  it('accounts, with and without optional fields, read back whole', () => {
    const packer = new RecordPacker();
    const accounts = [
      account('a1', { identityId: 'i1', attributes: rich(1), created: '2026-01-01T00:00:00.000Z' }),
      account('a2', { attributes: { only: 'one' } }),
    ];
    expect(accounts.map((a) => packer.unpackAccount(packer.packAccount(a)))).toEqual(accounts);
  });

  it('matching records (a partition holds them for moves) read back whole: lists, a missing value, key order', () => {
    const packer = new RecordPacker();
    const records = [
      { id: 'i1', attributes: { lastName: ['Lee', 'Li'], displayName: 'Ann Lee', email: 'ann@x.org' } },
      { id: 'i2', attributes: { lastName: 'Park', displayName: 'Bo Park' } },
      { id: 'i3', attributes: { lastName: 'Lee', displayName: 'Cy Lee', email: 'cy@x.org' } },
    ];
    const back = records.map((r) => packer.unpackWithAttributes(packer.packWithAttributes(r)));
    expect(JSON.stringify(back)).toBe(JSON.stringify(records));
    // The attribute names are not repeated per record.
    expect(packer.packWithAttributes(records[2]!)).not.toContain('displayName');
  });
});

describe('connector account index: packed accounts', () => {
  it('gives back the attributes it was given, as a fresh copy each time', () => {
    const index = new ConnectorAccountIndex();
    const attributes = { ...rich(7), accounts: ['a'], id: 'key-1' };
    index.add(account('c1', { nativeIdentity: 'key-1', disabled: true, attributes }));
    const e = index.waiting('key-1')!;
    expect(e.key).toBe('key-1');
    expect(e.disabled).toBe(true);
    expect(e.contributors).toEqual(['a']);
    expect(e.attributes()).toEqual(attributes);
    const copy = e.attributes();
    (copy.nested as Record<string, unknown>).level = 'changed';
    expect(e.attributes()).toEqual(attributes);
  });

  it('gives back the source accounts read, in the order read, the completing one as it was read', () => {
    const index = new ConnectorAccountIndex();
    index.add(account('c1', { nativeIdentity: 'key-1', attributes: { accounts: ['a', 'b', 'c'] } }));
    const e = index.waiting('key-1')!;
    const read = ['c', 'a', 'b'].map((id, n) =>
      account(id, { sourceName: `S${n}`, identityId: 'i', attributes: rich(n) }),
    );
    expect(index.see(e, read[0]!)).toBeUndefined();
    expect(index.see(e, read[1]!)).toBeUndefined();
    expect(e.seen()).toEqual(read.slice(0, 2));
    expect(index.see(e, read[2]!)).toBe(e);
    const seen = e.seen();
    expect(seen).toEqual(read);
    expect(seen[2]).toBe(read[2]);
  });
});

describe('aggregation: accounts held packed come out as read', () => {
  /** Contractors and LDAP, each person with values of every kind; no two people alike. */
  function tenant(extra: Record<string, unknown> = {}): Harness {
    const h = harness({ attributeDefinitions: definitions, ...extra });
    const contractors = h.fake.addSource('Contractors');
    const ldap = h.fake.addSource('LDAP');
    const people = ['Ann Archer', 'Bob Brook', 'Cyd Cole', 'Dan Dunn', 'Eve Eden', 'Fay Frost'];
    people.forEach((name, i) => {
      const [firstName, lastName] = name.split(' ');
      const src = i % 2 === 0 ? contractors : ldap;
      h.fake.addAccount(src, `N${i}`, { ...rich(i), firstName, lastName, email: `${firstName}@x${i}.example` });
    });
    return h;
  }

  const probabilistic = {
    model: 'probabilistic',
    attributes: [
      { attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: false },
      { attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: false },
    ],
  };

  it('a full probabilistic run (new accounts held until every source is read) emits what a run without matching emits', async () => {
    const held = tenant({ matching: probabilistic, includeIdentities: false });
    const streamed = tenant({ includeIdentities: false });
    const a = await list(held);
    const b = await list(streamed);
    expect(held.summaries[0]?.modelParameters?.source).toBe('estimated');
    expect(held.summaries[0]?.potentialDuplicates).toBe(0);
    expect(a).toHaveLength(6);
    expect(comparable(a)).toEqual(comparable(b));
    // The held accounts' own values, not only equal between the two runs (the merge drops empty values).
    const ann = a.find((i) => i.attributes.firstName === 'Ann')!;
    const { empty: _empty, nothing: _nothing, ...kept } = rich(0);
    expect(ann.attributes).toMatchObject({ ...kept, login: 'annarcher', greeting: 'Hello Ann' });
    expect(ann.attributes).not.toHaveProperty('nothing');
  });

  it('a connector account whose source accounts come from two sources, and one none of whose source accounts is read, come out as stored and merged', async () => {
    const h = harness({ attributeDefinitions: definitions });
    const contractors = h.fake.addSource('Contractors');
    const ldap = h.fake.addSource('LDAP');
    const c = h.fake.addAccount(contractors, 'C1', { firstName: 'Ann', lastName: 'Archer', only: rich(1) });
    const l = h.fake.addAccount(ldap, 'L1', { firstName: 'Annie', title: 'Dr', list: rich(2).list });
    const stored = { login: 'annarcher', empNo: 'E0001', greeting: 'Hello Ann', accounts: [c.id, l.id] };
    h.fake.addAccount(h.own, 'key-ann', { ...stored, id: 'key-ann', name: 'Ann' });
    const gone = { ...rich(3), login: 'gone', empNo: 'E0002', greeting: 'Hi', accounts: ['deleted-source-account'] };
    h.fake.addAccount(h.own, 'key-gone', { ...gone, id: 'key-gone' }, { disabled: true });
    const items = await list(h);
    const ann = items.find((i) => i.identity === 'key-ann')!;
    expect(ann.attributes).toEqual({
      firstName: 'Ann',
      lastName: 'Archer',
      only: rich(1),
      title: 'Dr',
      list: rich(2).list,
      login: 'annarcher',
      empNo: 'E0001',
      greeting: 'Hello Ann',
      accounts: [c.id, l.id],
      sources: ['Contractors', 'LDAP'],
      id: 'key-ann',
      name: 'key-ann',
    });
    const left = items.find((i) => i.identity === 'key-gone')!;
    expect(left.disabled).toBe(true);
    expect(left.attributes).toEqual({ ...gone, id: 'key-gone', name: 'key-gone' });
  });
});

describe('recording review queue', () => {
  it(`keeps the first ${PENDING_REVIEWS_KEPT} reviews and counts all`, async () => {
    const q = new RecordingReviewQueue();
    const review = (i: number) => ({
      accountId: `a${i}`,
      accountName: `A${i}`,
      sourceName: 'S',
      attributes: {},
      candidates: [],
      reviewers: [],
      expiresAt: '2030-01-01T00:00:00.000Z',
    });
    for (let i = 0; i <= PENDING_REVIEWS_KEPT; i++) await q.submit(review(i));
    expect(q.submitted).toBe(PENDING_REVIEWS_KEPT + 1);
    expect(q.pending).toHaveLength(PENDING_REVIEWS_KEPT);
    expect(q.pending[0]?.accountId).toBe('a0');
    expect(q.pending.at(-1)?.accountId).toBe(`a${PENDING_REVIEWS_KEPT - 1}`);
  });
});
