/**
 * The tenant of the partition tests (test/core/aggregation-partitions*.test.ts, test/queue/partition-jobs.test.ts):
 * bench:matching's people with same-run duplicates read far apart, and a run's output with platform ids
 * and connector keys replaced by generator names, so two runs' outputs compare item for item.
 */
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import type { MatchingParallelism } from '../../src/core/matching/parallel/parallelism';
import type { PendingReview } from '../../src/core/ports/review-queue';
import { generate } from '../../bench/matching-data';
import { RULES, expectSameList } from './aggregation-output';
import { collect, context, harness, type Harness, type LogLine } from './support';

const DEFINITIONS = [
  { name: 'uid', expression: '$firstName.toLowerCase()', type: 'unique' },
  { name: 'empNo', expression: 'E$counter', type: 'counter', digits: 6 },
];

export interface Tenant {
  h: Harness;
  /** Generator name by platform id (identities, source accounts). */
  names: Map<string, string>;
  hr: ReturnType<Harness['fake']['addSource']>;
}

/**
 * bench:matching's people: 400 identities (or `identityCount`: the run reads them 1,000 at a time), 400
 * accounts (duplicates of identities and of each other).
 */
export function tenant(
  parallelism: MatchingParallelism,
  extra: Record<string, unknown> = {},
  seed = 17,
  identityCount = 400,
): Tenant {
  const h = harness({
    sources: ['HR'],
    matching: RULES,
    includeIdentities: true,
    attributeDefinitions: DEFINITIONS,
    ...extra,
  });
  const hr = h.fake.addSource('HR');
  const { identities, accounts, truth } = generate(seed, identityCount, 400);
  const names = new Map<string, string>();
  const platformId = new Map<string, string>();
  for (const i of identities) {
    const id = h.fake.addIdentity(i.id, i.attributes).id;
    names.set(id, i.id);
    platformId.set(i.id, id);
  }
  // Copies of every 16th account, read last: same-run duplicates read far from their originals (other
  // batches, other partitions had the accounts been split by their order).
  const copies = accounts
    .filter((_, n) => n % 16 === 5)
    .map((a) => ({
      id: `copy-${a.id}`,
      attributes: { ...a.attributes, userName: `${String(a.attributes.userName)}2` },
    }));
  [...accounts, ...copies].forEach((a, n) => {
    // Every other duplicate of an identity is correlated with it already: created, not reviewed, when
    // that identity is its only potential duplicate.
    const identityId = n % 2 === 0 ? platformId.get(truth.get(a.id) ?? '') : undefined;
    names.set(
      h.fake.addAccount(hr, a.id, { ...a.attributes, firstName: a.id.slice(0, 3) }, identityId ? { identityId } : {})
        .id,
      a.id,
    );
  });
  h.deps.matchingParallelism = parallelism;
  return { h, names, hr };
}

export interface Output {
  items: unknown[];
  reviews: unknown[];
  /** Reviews with a candidate created by the same run. */
  sameRun: number;
}

/**
 * The run's items and reviews with platform ids and the run's connector keys replaced by generator
 * names (the tenant keeps the keys' names for its later runs).
 */
export async function aggregate(t: Tenant, lines: LogLine[] = []): Promise<Output & { raw: AccountItem[] }> {
  const raw = (await collect(createAccountListCommand(t.h.deps)({}, t.h.config, context(lines)))) as AccountItem[];
  const name = t.names;
  for (const item of raw) {
    const from = (item.attributes.accounts as string[]).map((id) => name.get(id) ?? id).join('+');
    if (!name.has(item.identity)) name.set(item.identity, `account(${from})`);
  }
  const rename = (id: string): string => name.get(id) ?? id;
  const items = raw.map((i) => ({
    ...i,
    identity: rename(i.identity),
    attributes: {
      ...i.attributes,
      id: rename(String(i.attributes.id)),
      accounts: (i.attributes.accounts as string[]).map(rename),
      name: undefined,
    },
  }));
  const summary = t.h.summaries.at(-1)!;
  const reviews = summary.pendingReviews.map((r: PendingReview) => ({
    ...r,
    accountId: rename(r.accountId),
    expiresAt: undefined,
    // Ties in score are ranked by candidate id, and connector keys differ per run: rank ties by name.
    candidates: r.candidates
      .map((c) => ({ ...c, candidateId: rename(c.candidateId) }))
      .sort((a, b) => b.score - a.score || a.candidateId.localeCompare(b.candidateId)),
  }));
  const sameRun = summary.pendingReviews.filter((r) =>
    r.candidates.some((c) => raw.some((i) => i.identity === c.candidateId)),
  ).length;
  return { items, reviews, sameRun, raw };
}

export function expectSameOutput(actual: Output, expected: Output): void {
  expectSameList(actual.items, expected.items);
  expectSameList(actual.reviews, expected.reviews);
  expect(actual.sameRun).toBe(expected.sameRun);
}

export const ONE: MatchingParallelism = { threads: 1, minRecords: 0 };
export const partitioned = (lines: LogLine[]): string | undefined =>
  lines.find((l) => /new accounts in \d+ partitions?/.test(l.msg))?.msg;
export const started = (parts: number): string =>
  `Matching new accounts in ${parts} partition${parts === 1 ? '' : 's'} as the sources are read`;
