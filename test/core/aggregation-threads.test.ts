import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { MatchingParallelism } from '../../src/core/matching/parallel/parallelism';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import { generate } from '../../bench/matching-data';
import { collect, context, failure, harness, type Harness } from './support';

const RULES = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
  ],
};
const PROBABILISTIC = {
  model: 'probabilistic',
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92 },
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
  ],
};

const namesOf = new WeakMap<Harness, Map<string, string>>();

/** A tenant whose accounts include duplicates of identities and of each other (the bench's generator). */
function tenant(
  matching: Record<string, unknown>,
  extra: Record<string, unknown>,
  parallelism?: MatchingParallelism,
): Harness {
  const h = harness({ sources: ['HR'], matching, includeIdentities: true, ...extra });
  const hr = h.fake.addSource('HR');
  const { identities, accounts } = generate(17, 400, 400);
  // Platform ids are random: the comparison uses the generator's names instead.
  const names = new Map<string, string>();
  for (const i of identities) names.set(h.fake.addIdentity(i.id, i.attributes).id, i.id);
  for (const a of accounts) names.set(h.fake.addAccount(hr, a.id, a.attributes).id, a.id);
  namesOf.set(h, names);
  if (parallelism) h.deps.matchingParallelism = parallelism;
  return h;
}

/** The run's output with the random connector keys replaced by the account each was created from. */
async function aggregate(h: Harness): Promise<unknown> {
  const items = await collect(createAccountListCommand(h.deps)({}, h.config, context()));
  const keyOf = new Map(namesOf.get(h));
  for (const item of items) {
    const attrs = item.attributes as Record<string, unknown>;
    keyOf.set(String(item.identity), (attrs.accounts as string[]).map((id) => keyOf.get(id)).join());
  }
  const summary = h.summaries[0]!;
  const reviews = summary.pendingReviews.map((r) => ({
    ...r,
    accountId: keyOf.get(r.accountId),
    expiresAt: undefined,
    // Ties in score are ranked by candidate id, and connector keys are random per run: rank ties by name.
    candidates: r.candidates
      .map((c) => ({ ...c, candidateId: keyOf.get(c.candidateId) ?? c.candidateId }))
      .sort(
        (a, b) =>
          (b.probability ?? 0) - (a.probability ?? 0) ||
          b.score - a.score ||
          a.candidateId.localeCompare(b.candidateId),
      ),
  }));
  const created = items.map((i) => keyOf.get(String(i.identity)));
  return {
    created,
    reviews,
    potentialDuplicates: summary.potentialDuplicates,
    accountsCreated: summary.accountsCreated,
  };
}

describe('aggregation with matching threads', () => {
  afterEach(() => expect(liveMatchingThreads()).toBe(0));

  for (const [label, matching, extra] of [
    ['rules, default batches (250)', RULES, {}],
    [
      'probabilistic, batching off (the estimate over every new account is the parallel part)',
      PROBABILISTIC,
      { enableBatching: false },
    ],
  ] as const) {
    it(`${label}: the same accounts and review forms as one thread`, async () => {
      const one = await aggregate(tenant(matching, extra, { threads: 1, minRecords: 0 }));
      const three = await aggregate(tenant(matching, extra, { threads: 3, minRecords: 0 }));
      expect(three).toEqual(one);
      // Enough review forms that equal results say something (the simulated tenant's duplicates).
      expect((one as { reviews: unknown[] }).reviews.length).toBeGreaterThanOrEqual(10);
    }, 120_000);
  }

  it('default parallelism: same output, and no thread is left when the run ends', async () => {
    const extra = { enableBatching: true, batchSize: 200 };
    const one = await aggregate(tenant(RULES, extra, { threads: 1, minRecords: 0 }));
    expect(await aggregate(tenant(RULES, extra))).toEqual(one);
  });

  it('a cancelled run ends its threads', async () => {
    const h = tenant(RULES, { enableBatching: true, batchSize: 200 }, { threads: 3, minRecords: 0 });
    const abort = new AbortController();
    const iter = createAccountListCommand(h.deps)({}, h.config, context([], abort.signal))[Symbol.asyncIterator]();
    await iter.next();
    expect(liveMatchingThreads()).toBe(2);
    abort.abort();
    await iter.return?.();
    expect(liveMatchingThreads()).toBe(0);
  });

  it('batches too small for threads (batching off: one account at a time, rules model): no thread starts', async () => {
    const h = tenant(RULES, { enableBatching: false }, { threads: 3, minRecords: 0 });
    const iter = createAccountListCommand(h.deps)({}, h.config, context())[Symbol.asyncIterator]();
    await iter.next();
    expect(liveMatchingThreads()).toBe(0);
    await iter.return?.();
  });

  it('a failed run ends its threads', async () => {
    const h = tenant(RULES, { enableBatching: true, batchSize: 200 }, { threads: 3, minRecords: 0 });
    let reviews = 0;
    h.deps.reviewQueue = () =>
      ({
        submit: async () => {
          if (++reviews === 3) throw new Error('review store down');
        },
      }) as never;
    expect((await failure(createAccountListCommand(h.deps)({}, h.config, context()))).message).toMatch(
      /review store down/,
    );
  });
});
