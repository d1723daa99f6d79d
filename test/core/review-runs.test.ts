/**
 * Review decisions across runs: what a limited run may delete or complete, and links to
 * connector accounts created earlier in the same run.
 */
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import type { ReviewDecisionView, ReviewQueue } from '../../src/core/ports/review-queue';
import { collect, harness, run, type Harness } from './support';

const matching = { attributes: [{ attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: true }] };
const list = (h: Harness, config: Record<string, unknown> = h.config) =>
  collect(run(createAccountListCommand(h.deps), h, {}, [], config)) as Promise<AccountItem[]>;

/** A lifecycle queue with fixed decisions, recording what the run completes and discards. */
function lifecycle(h: Harness, decisions: Map<string, ReviewDecisionView>) {
  const q = { completed: [] as string[], discardCalls: [] as ReadonlySet<string>[], submitted: [] as string[] };
  const queue: ReviewQueue = {
    submit: async (r) => void q.submitted.push(r.accountId),
    readDecisions: async () => new Map(decisions),
    completeDecisions: async (ids) => void q.completed.push(...ids),
    discardUnseen: async (seen) => {
      q.discardCalls.push(seen);
      return 0;
    },
  };
  h.deps.reviewQueue = () => queue;
  return q;
}

describe('limited runs and review forms', () => {
  test('a run limited by "Aggregation batch size" never discards forms, even when skipped accounts kept it under the limit', async () => {
    const h = harness({ matching });
    const contractors = h.fake.addSource('Contractors');
    h.fake.addSource('LDAP');
    h.fake.addAccount(contractors, 'svc', { firstName: 'bot', lastName: 'Bot' }, { isMachine: true });
    h.fake.addAccount(contractors, 'C1', { firstName: 'Ada', lastName: 'Lovelace' });
    h.fake.addAccount(contractors, 'C2', { firstName: 'Alan', lastName: 'Turing' });
    const unread = h.fake.addAccount(contractors, 'C3', { firstName: 'Grace', lastName: 'Hopper' });
    const q = lifecycle(h, new Map<string, ReviewDecisionView>([[unread.id, { kind: 'pending' }]]));
    // The page of 3 holds the machine account: 2 accounts taken, under the limit, C3 never read.
    const out = await list(h, { ...h.config, aggregationBatchSize: 3 });
    expect(out).toHaveLength(2);
    expect(q.discardCalls).toHaveLength(0);
    // A full run reads C3 and keeps its form.
    await list(h);
    expect(q.discardCalls).toHaveLength(1);
    expect(q.discardCalls[0]!.has(unread.id)).toBe(true);
  });
});

describe('Reset accounts? and the end of the run', () => {
  test('a reset run whose review clean-up fails keeps "Reset accounts?" pending on the source', async () => {
    const h = harness({ matching, reset: true });
    const contractors = h.fake.addSource('Contractors');
    h.fake.addSource('LDAP');
    h.fake.addAccount(contractors, 'C1', { firstName: 'Ada', lastName: 'Lovelace' });
    h.deps.reviewQueue = () => ({
      submit: async () => undefined,
      readDecisions: async () => new Map(),
      discardUnseen: async () => {
        throw new Error('forms endpoint down');
      },
    });
    await expect(list(h)).rejects.toThrow('forms endpoint down');
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.reset).not.toBe(false);
    h.deps.reviewQueue = undefined;
    await list(h);
    expect(h.fake.sources.get(h.own.id)?.connectorAttributes.reset).toBe(false);
  });
});

describe('"same person as" a connector account', () => {
  test.each([
    ['in an earlier batch', { batchSize: 1 }],
    ['in the same batch', {}],
  ])('a link to an account created earlier in the same run (%s) is applied by the next run', async (_label, extra) => {
    const h = harness({ matching, ...extra });
    const contractors = h.fake.addSource('Contractors');
    const ldap = h.fake.addSource('LDAP');
    const first = h.fake.addAccount(contractors, 'C1', { firstName: 'Ada', lastName: 'Lovelace' });
    const twin = h.fake.addAccount(ldap, 'L1', { firstName: 'Ada', lastName: 'Lovelace' });
    const q1 = lifecycle(h, new Map());
    const out = await list(h);
    expect(out).toHaveLength(1);
    expect(q1.submitted).toEqual([twin.id]);
    const review = h.summaries[0]!.pendingReviews[0]!;
    // Across batches the candidate is the new connector account's key; within a batch, the source account.
    expect(review.candidates[0]).toMatchObject({
      candidateKind: 'account',
      candidateId: 'batchSize' in extra ? out[0]!.identity : first.id,
    });
    h.fake.ingest(h.own.id, out);

    const q2 = lifecycle(
      h,
      new Map<string, ReviewDecisionView>([
        [twin.id, { kind: 'link', identityId: review.candidates[0]!.candidateId, candidateKind: 'account' }],
      ]),
    );
    const next = await list(h);
    expect(next).toHaveLength(1);
    expect(next[0]!.identity).toBe(out[0]!.identity);
    expect((next[0]!.attributes.accounts as string[]).sort()).toEqual([first.id, twin.id].sort());
    expect(q2.completed).toEqual([twin.id]);
  });
});

describe('decisions are completed only when applied', () => {
  test('a link whose source account this run did not read (limited run, disabled source) keeps its form and is not stored', async () => {
    const h = harness({ matching });
    const contractors = h.fake.addSource('Contractors');
    const ldap = h.fake.addSource('LDAP');
    const c1 = h.fake.addAccount(contractors, 'C1', { firstName: 'Ada', lastName: 'Lovelace' });
    h.fake.addAccount(contractors, 'C2', { firstName: 'Alan', lastName: 'Turing' });
    h.fake.ingest(h.own.id, await list(h));
    const ada = h.fake.accountsOf(h.own.id).find((a) => a.attributes.lastName === 'Lovelace')!;
    const twin = h.fake.addAccount(ldap, 'L1', { firstName: 'Ada', lastName: 'Lovelace' });
    const decisions = new Map<string, ReviewDecisionView>([
      [twin.id, { kind: 'link', identityId: ada.identityId!, candidateKind: 'identity' }],
    ]);

    const limited = lifecycle(h, decisions);
    const out = await list(h, { ...h.config, aggregationBatchSize: 2 });
    expect(out.find((i) => i.identity === ada.nativeIdentity)?.attributes.accounts).toEqual([c1.id]);
    expect(limited.completed).toEqual([]);

    ldap.enabled = false;
    h.fake.sources.set(ldap.id, ldap);
    const skipped = lifecycle(h, decisions);
    const out2 = await list(h);
    expect(h.summaries.at(-1)?.skippedSources).toEqual(['LDAP']);
    expect(out2.find((i) => i.identity === ada.nativeIdentity)?.attributes.accounts).toEqual([c1.id]);
    expect(skipped.completed).toEqual([]);

    ldap.enabled = true;
    const full = lifecycle(h, decisions);
    const out3 = await list(h);
    expect((out3.find((i) => i.identity === ada.nativeIdentity)?.attributes.accounts as string[]).sort()).toEqual(
      [c1.id, twin.id].sort(),
    );
    expect(full.completed).toEqual([twin.id]);
  });
});
