/**
 * A rules run decided in partitions (issue 27) gives what the same run in one thread gives, item for
 * item: the same accounts in the same order with the same unique values and counters, the same review
 * forms with the same candidates, including same-run duplicates read far apart, whatever the number of
 * partitions, the batch size, the point where the partitions start, existing accounts
 * refreshed in between, accounts correlated with their own duplicate and reviewers' "not a duplicate".
 */
import { FusionError } from '../../src/core/errors';
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import type { MatchingParallelism } from '../../src/core/matching/parallel/parallelism';
import { generate } from '../../bench/matching-data';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import { startPartitionThread } from '../../src/core/aggregation/partition-thread';
import type { PendingReview, ReviewDecisionView } from '../../src/core/ports/review-queue';
import { CandidateDirectory } from '../../src/core/aggregation/candidate-directory';
import { context, type LogLine } from './support';
import { scaled } from '../support/time-factor';
import { ONE, aggregate, expectSameOutput, partitioned, started, tenant } from './partitions-tenant';

describe('a rules run decided in partitions', () => {
  afterEach(() => expect(liveMatchingThreads()).toBe(0));

  // Threads: the partitions' and the run's own.
  for (const [parts, batchSize] of [
    [1, 250],
    [2, 37],
    [4, 100],
  ] as const) {
    it(
      `${parts} partition(s), batches of ${batchSize}: the same items and review forms as one thread`,
      async () => {
        const extra = { enableBatching: true, batchSize };
        const { raw: _one, ...one } = await aggregate(tenant(ONE, extra));
        const lines: LogLine[] = [];
        const { raw: _many, ...many } = await aggregate(
          tenant({ threads: parts + 1, minRecords: 0, partitions: true }, extra),
          lines,
        );
        expect(partitioned(lines)).toBe(started(parts));
        expectSameOutput(many, one);
        // Enough of each kind that equal outputs say something.
        expect(one.reviews.length).toBeGreaterThanOrEqual(20);
        expect(one.sameRun).toBeGreaterThanOrEqual(10);
        expect(one.items.length).toBeGreaterThanOrEqual(250);
      },
      scaled(120_000),
    );
  }

  // 2,500 identities: the run reads them 1,000 at a time, so the partitions (from 0 records) get the
  // second and third chunks after they started (the late-baseline path).
  for (const identityCount of [400, 2_500]) {
    it(
      `the partitions name each baseline candidate's directory row: the run looks no identity up by its id (${identityCount} identities)`,
      async () => {
        const extra = { enableBatching: true, batchSize: 100 };
        const { raw: _one, ...one } = await aggregate(tenant(ONE, extra, 17, identityCount));
        const byId = jest.spyOn(CandidateDirectory.prototype, 'details');
        const byRow = jest.spyOn(CandidateDirectory.prototype, 'detailsAt');
        try {
          const t = tenant({ threads: 3, minRecords: 0, partitions: true }, extra, 17, identityCount);
          const { raw: _many, ...many } = await aggregate(t);
          // The same details on every candidate (the rows are right).
          expectSameOutput(many, one);
          const shown = one.reviews.flatMap((r) => (r as PendingReview).candidates);
          expect(shown.filter((c) => c.candidateKind === 'identity' && c.details?.name).length).toBeGreaterThan(20);
          // By id only what a partition cannot know the row of: accounts of this run (created, or earlier in
          // the batch), never an identity of the baseline (the tenant names them i<n>).
          const identities = [...t.names].filter(([, name]) => /^i\d+$/.test(name)).map(([id]) => id);
          expect(identities.length).toBe(identityCount);
          const lookedUp = new Set(byId.mock.calls.map(([id]) => id));
          expect(identities.filter((id) => lookedUp.has(id))).toEqual([]);
          expect(byRow.mock.calls.length - byId.mock.calls.length).toBeGreaterThan(20);
        } finally {
          byId.mockRestore();
          byRow.mockRestore();
        }
      },
      scaled(120_000),
    );
  }

  it('without the setting (the default), a run with several threads does not decide in partitions', async () => {
    const lines: LogLine[] = [];
    const out = await aggregate(tenant({ threads: 3, minRecords: 0 }, { enableBatching: true, batchSize: 50 }), lines);
    expect(partitioned(lines)).toBeUndefined();
    expect(out.items.length).toBeGreaterThanOrEqual(250);
  });

  it('partitions on and matching child jobs configured (queue mode): the partitions decide, the same output', async () => {
    const extra = { enableBatching: true, batchSize: 50 };
    const { raw: _one, ...one } = await aggregate(tenant(ONE, extra));
    const lines: LogLine[] = [];
    const t = tenant({ threads: 3, minRecords: 0, partitions: true }, extra);
    const unused = (): never => {
      throw new Error('no child job expected');
    };
    t.h.deps.matchingShards = { shards: () => 2, minRecords: 0, minAccountsPerShard: 1, forRun: unused };
    const { raw: _many, ...many } = await aggregate(t, lines);
    // An operator whose autoscaler counts child jobs learns why this run makes none.
    expect(partitioned(lines)).toBe(
      `${started(2)} (threads of this process: no matching child jobs, so other workers do not share this run's matching)`,
    );
    expect(lines.find((l) => l.msg.startsWith(started(2)))?.fields).toMatchObject({ partitions: 2, childJobs: false });
    expectSameOutput(many, one);
  });

  it('a memory limit that leaves no room for partitions: the usual matcher goes on, the same output', async () => {
    const extra = { enableBatching: true, batchSize: 50 };
    const { raw: _one, ...one } = await aggregate(tenant(ONE, extra));
    const lines: LogLine[] = [];
    // Partitions would hold the 400 identities' values beside the run's own (thread costs at this scale).
    const threadCost = { perRecord: 1_200, fixed: 0, ownerPerRecord: 2_500 };
    const capped = tenant({ threads: 3, minRecords: 0, partitions: true, memoryLimit: 1_000_000, threadCost }, extra);
    const { raw: _many, ...many } = await aggregate(capped, lines);
    expect(partitioned(lines)).toBeUndefined();
    expect(lines.map((l) => l.msg)).toContain(
      "Matching in the run's own thread: the memory limit leaves no room for partitions",
    );
    expectSameOutput(many, one);
  });

  it('partitions that start once the run has foreseen enough accounts (400 identities and 150 of 425 new): the same output', async () => {
    const extra = { enableBatching: true, batchSize: 50 };
    const { raw: _one, ...one } = await aggregate(tenant(ONE, extra));
    const lines: LogLine[] = [];
    const { raw: _many, ...many } = await aggregate(
      tenant({ threads: 3, minRecords: 550, partitions: true }, extra),
      lines,
    );
    expect(partitioned(lines)).toBe(started(2));
    expectSameOutput(many, one);
  });

  it('a run that matches before it has foreseen minRecords records: the usual matcher, the same output', async () => {
    const extra = { enableBatching: true, batchSize: 50 };
    const { raw: _one, ...one } = await aggregate(tenant(ONE, extra));
    const lines: LogLine[] = [];
    const { raw: _many, ...many } = await aggregate(
      tenant({ threads: 3, minRecords: 1_000_000, partitions: true }, extra),
      lines,
    );
    expect(partitioned(lines)).toBeUndefined();
    expectSameOutput(many, one);
  });

  it('a second run: existing accounts refreshed between new ones, and reviewers\u2019 "not a duplicate"', async () => {
    const extra = { enableBatching: true, batchSize: 60 };
    const second = async (parallelism: MatchingParallelism, lines: LogLine[] = []) => {
      const t = tenant(parallelism, extra);
      const first = await aggregate(t);
      t.h.fake.ingest(t.h.own.id, first.raw);
      // The platform made an identity of each created account.
      for (const [id, identity] of t.h.fake.identities)
        if (!t.names.has(id)) t.names.set(id, `identity-of-${t.names.get(String(identity.attributes.id))}`);
      // New accounts after the first run: copies of earlier ones (duplicates of created accounts and of
      // identities), read between the existing ones.
      const more = generate(29, 400, 200).accounts;
      more.forEach((a, n) =>
        t.names.set(
          t.h.fake.addAccount(t.hr, `more-${a.id}`, { ...a.attributes, firstName: `m${n % 7}` }).id,
          `more-${a.id}`,
        ),
      );
      // "Not a duplicate" for the accounts the first run sent to review: created without matching.
      const approved = new Map<string, ReviewDecisionView>();
      const reviewed = t.h.summaries[0]!.pendingReviews.map((r) => r.accountId);
      for (const id of reviewed.slice(0, 10)) approved.set(id, { kind: 'new-identity' });
      t.h.deps.reviewQueue = () => ({ submit: async () => undefined, readDecisions: async () => new Map(approved) });
      const { raw: _raw, ...out } = await aggregate(t, lines);
      return { out, approved: reviewed.slice(0, 10).map((id) => t.names.get(id)!) };
    };
    const one = await second(ONE);
    const lines: LogLine[] = [];
    const many = await second({ threads: 4, minRecords: 0, partitions: true }, lines);
    expect(partitioned(lines)).toBe(started(3));
    expectSameOutput(many.out, one.out);
    const items = one.out.items as AccountItem[];
    const created = items.filter((i) => i.identity.startsWith('account(more-'));
    // Refreshed accounts (the first run's) and the new accounts created.
    expect(items.length - created.length).toBeGreaterThan(250);
    expect(created.length).toBeGreaterThan(50);
    // The approved accounts (sent to review by the first run) are created now.
    expect(one.approved.filter((name) => items.some((i) => i.identity === `account(${name})`))).toEqual(one.approved);
  });

  it('a partition thread that dies mid-run: the run fails with its error, having emitted no more than a prefix of the one-thread output', async () => {
    const extra = { enableBatching: true, batchSize: 20 };
    const { raw: _one, ...one } = await aggregate(tenant(ONE, extra));
    const t = tenant({ threads: 3, minRecords: 0, partitions: true }, extra);
    let killed = false;
    // The thread's first three batches reach the run; then it is terminated (or, where it had already
    // finished, its later batches are lost): either way accounts stay undecided.
    t.h.deps.startPartition = (data, out, onEnd) => {
      const thread = startPartitionThread(
        data,
        {
          ...out,
          decided: (d) => {
            if (d.batch < 3) out.decided(d);
            else if (!killed) {
              killed = true;
              // Ended from outside the run: reported as startPartitionThread reports a thread's exit.
              const exit = 'matching partition thread exited (code 1) before deciding its accounts';
              void thread.close().then(() => onEnd(new FusionError('MATCHING_PARTITION_FAILED', exit)));
            }
          },
        },
        onEnd,
      );
      return thread;
    };
    const emitted: AccountItem[] = [];
    const error = await (async () => {
      try {
        for await (const item of createAccountListCommand(t.h.deps)({}, t.h.config, context()))
          emitted.push(item as AccountItem);
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(killed).toBe(true);
    expect(error).toMatchObject({
      code: 'MATCHING_PARTITION_FAILED',
      message: 'matching partition thread exited (code 1) before deciding its accounts',
    });
    expect(emitted.length).toBeLessThan(one.items.length);
    // What left before the failure is what a run in one thread emits first.
    const names = new Map(t.names);
    expect(emitted.map((i) => (i.attributes.accounts as string[]).map((id) => names.get(id)))).toEqual(
      (one.items as AccountItem[]).slice(0, emitted.length).map((i) => i.attributes.accounts),
    );
  });

  it('a cancelled run ends its partition threads', async () => {
    const t = tenant({ threads: 3, minRecords: 0, partitions: true }, { enableBatching: true, batchSize: 20 });
    const abort = new AbortController();
    const iter = createAccountListCommand(t.h.deps)({}, t.h.config, context([], abort.signal))[Symbol.asyncIterator]();
    await iter.next();
    abort.abort();
    await iter.return?.();
    expect(liveMatchingThreads()).toBe(0);
  });
});
