/**
 * A run decided in partitions against the same run in one thread, on the same tenant with the same key
 * namespace, compared as emitted: every item and every review form byte for byte, candidates in their
 * order (the form shows the first reviewTopK). Settings and data the main test does not vary: a
 * surname missing, multi-valued or without a phonetic key, an exact mandatory attribute with lists,
 * accounts whose two surnames join classes that live in different partitions (the classes then move),
 * and a source account the listing gives twice.
 */
jest.mock('../../src/core/aggregation/derived-key', () => {
  const actual = jest.requireActual<typeof DerivedKeysModule>('../../src/core/aggregation/derived-key');
  // One namespace for every run of this file: both runs give an account the same key.
  class SameNamespace extends actual.DerivedKeys {
    constructor(namespace?: string) {
      super(namespace ?? '0f5e6a6e-4b59-4a43-9e55-3f2b0d3c2a11');
    }
  }
  return { DerivedKeys: SameNamespace };
});

import type * as DerivedKeysModule from '../../src/core/aggregation/derived-key';
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import type { MatchingParallelism } from '../../src/core/matching/parallel/parallelism';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import type { PlatformAccount } from '../../src/core/ports/platform';
import { generate } from '../../bench/matching-data';
import { collect, context, harness, type Harness, type LogLine } from './support';
import { scaled } from '../support/time-factor';
import { expectSameList } from './aggregation-output';

type Mutate = (attributes: Record<string, unknown>, n: number) => Record<string, unknown>;

const DEFINITIONS = [
  { name: 'uid', expression: '$firstName.toLowerCase()', type: 'unique' },
  { name: 'empNo', expression: 'E$counter', type: 'counter', digits: 6 },
];

/** bench:matching's people with `mutate` applied; every 16th account copied at the end; `twice`: listed twice. */
function tenant(matching: unknown, mutate: Mutate, twice = new Set<string>()): Harness {
  const h = harness({
    sources: ['HR'],
    matching,
    includeIdentities: true,
    attributeDefinitions: DEFINITIONS,
    enableBatching: true,
    batchSize: 37,
  });
  const hr = h.fake.addSource('HR');
  const { identities, accounts } = generate(23, 400, 400);
  identities.forEach((i, n) => h.fake.addIdentity(i.id, mutate({ ...i.attributes }, 10_000 + n)));
  const copies = accounts.filter((_, n) => n % 16 === 5).map((a) => ({ id: `copy-${a.id}`, attributes: a.attributes }));
  [...accounts, ...copies].forEach((a, n) =>
    h.fake.addAccount(hr, a.id, mutate({ ...a.attributes, firstName: a.id.slice(0, 3) }, n)),
  );
  const list = h.fake.listAccounts.bind(h.fake);
  h.fake.listAccounts = async function* (query): AsyncIterable<PlatformAccount> {
    for await (const a of list(query)) {
      yield a;
      if (twice.has(a.nativeIdentity)) yield { ...a, attributes: { ...a.attributes } };
    }
  };
  return h;
}

/** A run on the tenant as it was before any run (counters and review decisions as at the start). */
async function aggregate(h: Harness, parallelism: MatchingParallelism, lines: LogLine[] = []) {
  const own = h.fake.sources.get(h.own.id)!;
  const start = JSON.stringify(own.connectorAttributes);
  h.deps.matchingParallelism = parallelism;
  const items = (await collect(createAccountListCommand(h.deps)({}, h.config, context(lines)))) as AccountItem[];
  own.connectorAttributes = JSON.parse(start) as Record<string, unknown>;
  const reviews = h.summaries.at(-1)!.pendingReviews.map((r) => ({ ...r, expiresAt: undefined }));
  return { items, reviews };
}

const surnames: Mutate = (a, n) => {
  if (n % 13 === 0) delete a.lastName;
  else if (n % 11 === 0) a.lastName = [a.lastName, 'Nguyen'];
  // No letter Double Metaphone codes: no key, so it can match nothing.
  else if (n % 17 === 0) a.lastName = '1234';
  return a;
};

const departments: Mutate = (a, n) => {
  if (n % 9 !== 0) a.department = ['Sales', 'IT', 'HR', 'Ops', 'Legal'][n % 5];
  if (n % 23 === 0) a.department = ['IT', 'HR'];
  return a;
};

/** The identities' surnames (the tenant's generator and seed): an account given a second one joins two classes. */
const SURNAMES = generate(23, 400, 400).identities.map((i) => String(i.attributes.lastName));

/**
 * Accounts only (identities keep one surname): every 7th account takes a second surname, one of an
 * identity's, so it joins its class with another that may live in another partition.
 */
const bridges: Mutate = (a, n) => {
  if (n < 10_000 && n % 7 === 3) a.lastName = [a.lastName, SURNAMES[(n * 37) % SURNAMES.length]];
  return a;
};

const SURNAME_RULES = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
  ],
};

const CASES: [string, unknown, Mutate][] = [
  ['a surname missing, multi-valued or without a key (Double Metaphone, mandatory)', SURNAME_RULES, surnames],
  ['accounts with a second surname that joins two classes', SURNAME_RULES, bridges],
  [
    'an exact mandatory department, some missing, some with two values',
    {
      maxReviewShare: 1,
      attributes: [
        { attribute: 'department', algorithm: 'exact', threshold: 100, mandatory: true },
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: false },
        { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
      ],
    },
    departments,
  ],
];

describe('a run decided in partitions, compared as emitted', () => {
  afterEach(() => expect(liveMatchingThreads()).toBe(0));

  for (const [label, matching, mutate] of CASES) {
    it(
      `${label}: every item and review form as one thread emits them`,
      async () => {
        const h = tenant(matching, mutate);
        const one = await aggregate(h, { threads: 1, minRecords: 0 });
        const lines: LogLine[] = [];
        const many = await aggregate(h, { threads: 4, minRecords: 100, partitions: true }, lines);
        expect(lines.map((l) => l.msg)).toContain('Matching new accounts in 3 partitions as the sources are read');
        const moved = lines.find((l) => l.msg.startsWith('Partitions decided'))?.fields.classesMoved;
        if (mutate === bridges) expect(moved).toBeGreaterThanOrEqual(5);
        expectSameList(many.items, one.items);
        expectSameList(many.reviews, one.reviews);
        expect(one.reviews.length).toBeGreaterThanOrEqual(20);
        // Reviews whose candidates tie in score (then ranked by kind and id, keys included).
        if (mutate === departments)
          expect(
            one.reviews.filter((r) => new Set(r.candidates.map((c) => c.score)).size < r.candidates.length).length,
          ).toBeGreaterThan(0);
      },
      scaled(120_000),
    );
  }

  it('a source account listed twice: processed once, in one thread and in partitions alike', async () => {
    const h = tenant(CASES[0]![1], surnames, new Set(['a3', 'a250']));
    const one = await aggregate(h, { threads: 1, minRecords: 0 });
    const lines: LogLine[] = [];
    const many = await aggregate(h, { threads: 2, minRecords: 0, partitions: true }, lines);
    expectSameList(many.items, one.items);
    expectSameList(many.reviews, one.reviews);
    const keys = one.items.map((i) => i.identity);
    expect(new Set(keys).size).toBe(keys.length);
    const sources = one.items.flatMap((i) => i.attributes.accounts as string[]);
    expect(new Set(sources).size).toBe(sources.length);
    expect(lines.filter((l) => l.msg.includes('listed this account twice')).map((l) => l.fields.account)).toEqual([
      'a3',
      'a250',
    ]);
  });
});
