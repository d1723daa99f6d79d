/**
 * An aggregation's output in a form two runs can be compared by (accounts created, review forms,
 * counts), over a tenant with duplicates from bench:matching's generator: shared by the threads
 * and the child-job tests, which both check that spreading matching changes nothing.
 */
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { MatchingParallelism } from '../../src/core/matching/parallel/parallelism';
import { generate } from '../../bench/matching-data';
import { collect, context, harness, type Harness, type LogLine } from './support';

export const RULES = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
  ],
};
/**
 * RULES without a partition plan (no mandatory attribute with lossless keys: the surname is not
 * mandatory): a run spreads phase 1 over matching threads instead of deciding in partitions.
 */
export const RULES_UNPLANNED = {
  attributes: RULES.attributes.map((a) => (a.attribute === 'lastName' ? { ...a, mandatory: false } : a)),
};
export const PROBABILISTIC = {
  model: 'probabilistic',
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92 },
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
  ],
};

const namesOf = new WeakMap<Harness, Map<string, string>>();

/** A tenant whose accounts include duplicates of identities and of each other (the bench's generator). */
export function tenant(
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
export async function aggregate(h: Harness, lines: LogLine[] = []): Promise<unknown> {
  const items = await collect(createAccountListCommand(h.deps)({}, h.config, context(lines)));
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

/**
 * Two runs' outputs (lists of items or reviews), equal element by element: on a difference, only the
 * first differing element is compared (a diff of whole outputs takes jest minutes to print).
 */
export function expectSameList(actual: readonly unknown[], expected: readonly unknown[]): void {
  const at = expected.findIndex((e, i) => JSON.stringify(actual[i]) !== JSON.stringify(e));
  if (at >= 0) expect({ at, element: actual[at] }).toEqual({ at, element: expected[at] });
  expect(actual.length).toBe(expected.length);
}
