/**
 * The planned matcher's own rules, with partitions decided in this thread: answers as one matcher's,
 * what the run is told when a partition fails or disagrees with it, when the partitions start, and a
 * memory limit that leaves no room for a partition. The partition thread itself: one that cannot
 * start reports why.
 */
import { DerivedKeys } from '../../src/core/aggregation/derived-key';
import { FusionError } from '../../src/core/errors';
import { PartitionDecider } from '../../src/core/aggregation/partition-decisions';
import { startPartitionThread, type StartPartition } from '../../src/core/aggregation/partition-thread';
import { PlannedMatcher, type PlannedMatcherOptions } from '../../src/core/aggregation/planned-matcher';
import { buildMatcher } from '../../src/core/matching';
import { inThread } from '../../src/core/matching/parallel/async-matcher';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-entry';
import type { MatchRecord } from '../../src/core/matching/types';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';
import { context, type LogLine } from './support';

const { identities, accounts } = generate(3, 200, 200);
const batchOf = (b: number): MatchRecord[] => accounts.slice(b * 50, b * 50 + 50);

/**
 * Partitions decided here, each message handled on a later turn; `fail`: the partition's error after
 * `after` batches decided.
 */
const inThisThread =
  (fail?: { after: number; message: string }): StartPartition =>
  (start, out, onEnd) => {
    let stopped = false;
    let decided = 0;
    const later = (f: () => void): void =>
      void setImmediate(() => {
        if (!stopped) f();
      });
    const decider = new PartitionDecider(start, {
      decided: (d) =>
        later(() => {
          if (fail && decided++ >= fail.after) {
            stopped = true;
            onEnd(new Error(fail.message));
          } else out.decided(d);
        }),
      exported: (to, batch, records) => later(() => out.exported(to, batch, records)),
    });
    return {
      take: (work) => later(() => decider.take(work)),
      import: (batch, records) => later(() => decider.import(batch, records)),
      close: async () => void (stopped = true),
    };
  };

const keys = new DerivedKeys();

function planned(
  o: Partial<PlannedMatcherOptions> = {},
  baseline: readonly MatchRecord[] = identities,
): PlannedMatcher {
  const m = new PlannedMatcher({
    settings: MAIN_SETTINGS,
    keys,
    build: () => inThread(buildMatcher(MAIN_SETTINGS)),
    partsFor: () => 3,
    minRecords: 0,
    skipsMatching: () => false,
    signal: new AbortController().signal,
    logger: context().logger,
    startPartition: inThisThread(),
    ...o,
  });
  m.addBaseline(baseline);
  return m;
}

/** Foresees every batch, as the run's ReadAhead does before it matches them. */
const foreseeAll = (m: PlannedMatcher): boolean[] => [0, 1, 2, 3].map((b) => m.foresee(batchOf(b)));

/**
 * Matches every batch with `m` and with `one`, a single matcher over the same baseline, expecting the same
 * candidate lists in the same order (the form shows the first reviewTopK); the accounts without a potential
 * duplicate join both baselines under the run's keys. Returns how many accounts had duplicates.
 */
async function matchLikeOne(m: PlannedMatcher, one: ReturnType<typeof buildMatcher>): Promise<number> {
  let found = 0;
  for (let b = 0; b < 4; b++) {
    const batch = batchOf(b);
    const got = await m.match(batch, { topK: Number.POSITIVE_INFINITY });
    const want = one.match(batch, { topK: Number.POSITIVE_INFINITY });
    expect(got.duplicates).toEqual(want.duplicates);
    found += got.duplicates.size;
    const created = batch.filter((a) => !want.duplicates.has(a.id));
    const joined = created.map((a) => ({ id: keys.keyOf(a.id), attributes: a.attributes }));
    m.addBaseline(
      joined,
      created.map((a) => a.id),
    );
    one.addBaseline(joined);
  }
  return found;
}

describe('planned matcher', () => {
  it('answers each batch with what its partitions found, as one matcher would', async () => {
    const m = planned();
    const one = buildMatcher(MAIN_SETTINGS);
    one.addBaseline(identities);
    expect(foreseeAll(m)).toEqual([true, true, true, true]);
    expect(await matchLikeOne(m, one)).toBeGreaterThan(10);
    await m.close();
  });

  it('started while the baseline is read: the rest of it streamed (classes joined by it move), answers as one matcher', async () => {
    // Identities of the later pages take a second surname of an earlier identity: their classes meet.
    const paged = identities.map((r, n) =>
      n >= 60 && n % 2 === 0
        ? {
            id: r.id,
            attributes: {
              ...r.attributes,
              lastName: [r.attributes.lastName, identities[(n * 7) % 60]!.attributes.lastName],
            },
          }
        : r,
    );
    let started = 0;
    const lines: LogLine[] = [];
    const m = planned(
      {
        minRecords: 60,
        logger: context(lines).logger,
        startPartition: (...args) => (started++, inThisThread()(...args)),
      },
      [],
    );
    const one = buildMatcher(MAIN_SETTINGS);
    for (let p = 0; p < paged.length; p += 50) {
      m.addBaseline(paged.slice(p, p + 50));
      one.addBaseline(paged.slice(p, p + 50));
      // Started once 60 identities are read (the second page), before the rest.
      expect(started).toBe(p === 0 ? 0 : 3);
    }
    foreseeAll(m);
    expect(await matchLikeOne(m, one)).toBeGreaterThan(10);
    await m.close();
    expect(lines.find((l) => l.msg.startsWith('Partitions decided'))?.fields.classesMoved).toBeGreaterThanOrEqual(3);
  });

  it('a baseline with identities that have no value of the plan attribute: they go to no partition, same answers', async () => {
    const keyless = identities.map((r, n) =>
      n % 10 === 0 ? { id: r.id, attributes: { ...r.attributes, lastName: undefined } } : r,
    );
    let baselines = 0;
    const m = planned(
      { startPartition: (start, ...rest) => ((baselines += start.baseline.length), inThisThread()(start, ...rest)) },
      keyless,
    );
    const one = buildMatcher(MAIN_SETTINGS);
    one.addBaseline(keyless);
    foreseeAll(m);
    expect(await matchLikeOne(m, one)).toBeGreaterThan(10);
    // Every identity with a surname was sent to exactly one partition, the others to none.
    expect(baselines).toBe(keyless.filter((r) => r.attributes.lastName !== undefined).length);
    await m.close();
  });

  it('a partition that fails: the batch waiting for it fails with its error', async () => {
    const m = planned({
      startPartition: inThisThread({ after: 1, message: 'matching partition thread: out of memory' }),
    });
    foreseeAll(m);
    await expect(
      (async () => {
        for (let b = 0; b < 4; b++) {
          const { duplicates } = await m.match(batchOf(b));
          const made = batchOf(b).filter((a) => !duplicates.has(a.id));
          m.addBaseline(
            made.map((a) => ({ id: keys.keyOf(a.id), attributes: a.attributes })),
            made.map((a) => a.id),
          );
        }
      })(),
    ).rejects.toThrow('matching partition thread: out of memory');
    await m.close();
  });

  it('the run creates an account its partition sent to review: refused', async () => {
    const m = planned();
    foreseeAll(m);
    const first = batchOf(0);
    const { duplicates } = await m.match(first);
    const reviewed = first.find((a) => duplicates.has(a.id))!;
    expect(() => m.addBaseline([{ id: 'k', attributes: reviewed.attributes }], [reviewed.id])).toThrow(
      `partitioned matching: the run created an account for ${reviewed.id}, which its partition did not`,
    );
    await m.close();
  });

  it('the run creates an account under another key, or fewer accounts than the partitions: refused', async () => {
    const m = planned();
    foreseeAll(m);
    const first = batchOf(0);
    const { duplicates } = await m.match(first);
    const made = first.filter((a) => !duplicates.has(a.id));
    expect(() => m.addBaseline([{ id: 'another-key', attributes: made[0]!.attributes }], [made[0]!.id])).toThrow(
      `partitioned matching: the run gave the account made from ${made[0]!.id} another key`,
    );
    expect(() => m.addBaseline([], [])).toThrow(
      `partitioned matching: its partition created an account for ${made[1]!.id}, which the run did not`,
    );
    await m.close();
  });

  it('the run matches accounts it did not foresee, or out of order: refused', async () => {
    const m = planned();
    m.foresee(batchOf(0));
    await expect(m.match(batchOf(1))).rejects.toThrow(/^partitioned matching: the run matched a\d+ out of the order/);
    await expect(m.match(batchOf(1))).rejects.toThrow(
      'partitioned matching: the run matched accounts it did not foresee',
    );
    await m.close();
  });

  it('a cancel ends the wait for a partition that never reports', async () => {
    const abort = new AbortController();
    let closed = 0;
    const m = planned({
      signal: abort.signal,
      startPartition: () => ({ take: () => undefined, import: () => undefined, close: async () => void closed++ }),
    });
    foreseeAll(m);
    const waiting = m.match(batchOf(0));
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'COMMAND_CANCELLED' });
    await m.close();
    expect(closed).toBe(3);
  });

  it('room at the first batch, none once the partitions would start: the usual matcher', async () => {
    let started = 0;
    const m = planned({
      minRecords: 300,
      partsFor: (records) => (records > 250 ? 0 : 2),
      startPartition: (...args) => (started++, inThisThread()(...args)),
    });
    expect(foreseeAll(m)).toEqual([true, true, true, true]);
    const { duplicates } = await m.match(batchOf(0), { topK: Number.POSITIVE_INFINITY });
    expect(started).toBe(0);
    expect(duplicates.size).toBeGreaterThan(0);
    await m.close();
  });

  it('a partition that fails while the run still reads: the next batch read fails with its error', async () => {
    let fail: ((e: Error) => void) | undefined;
    const m = planned({
      startPartition: (start, out, onEnd) => ((fail = onEnd), inThisThread()(start, out, onEnd)),
    });
    m.foresee(batchOf(0));
    fail!(new FusionError('MATCHING_PARTITION_FAILED', 'matching partition thread: out of memory'));
    expect(() => m.foresee(batchOf(1))).toThrow(
      expect.objectContaining({
        code: 'MATCHING_PARTITION_FAILED',
        message: 'matching partition thread: out of memory',
      }),
    );
    await m.close();
  });

  it('no room for a partition: none starts, the usual matcher goes on', async () => {
    let started = 0;
    const m = planned({
      partsFor: (records) => (records > 150 ? 0 : 4),
      startPartition: (...args) => (started++, inThisThread()(...args)),
    });
    expect(m.foresee(batchOf(0))).toBe(false);
    const { duplicates } = await m.match(batchOf(0), { topK: Number.POSITIVE_INFINITY });
    expect(started).toBe(0);
    expect(duplicates.size).toBeGreaterThan(0);
    await m.close();
  });

  it('partitions start once baseline and foreseen accounts reach minRecords; a match before that: the usual matcher', async () => {
    let started = 0;
    const startPartition: StartPartition = (...args) => (started++, inThisThread()(...args));
    const late = planned({ minRecords: 300, startPartition });
    // 200 identities, then 50 accounts per batch: the second batch reaches 300.
    expect(late.foresee(batchOf(0))).toBe(true);
    expect(started).toBe(0);
    late.foresee(batchOf(1));
    expect(started).toBe(3);
    await late.close();

    started = 0;
    // A quarter of minRecords foreseen (400 of 1,600) when the run matches: they start then.
    const atMatch = planned({ minRecords: 1_600, startPartition });
    foreseeAll(atMatch);
    expect(started).toBe(0);
    const first = await atMatch.match(batchOf(0), { topK: Number.POSITIVE_INFINITY });
    expect(started).toBe(3);
    expect(first.duplicates.size).toBeGreaterThan(0);
    await atMatch.close();

    started = 0;
    const never = planned({ minRecords: 1_601, startPartition });
    expect(foreseeAll(never)).toEqual([true, true, true, true]);
    const { duplicates } = await never.match(batchOf(0), { topK: Number.POSITIVE_INFINITY });
    expect(duplicates.size).toBeGreaterThan(0);
    // Still foreseeing: the run reads ahead and must go on telling.
    expect(never.foresee(batchOf(0))).toBe(true);
    expect(started).toBe(0);
    await never.close();
  });

  it('a partition thread that cannot start reports why, and exits', async () => {
    const error = await new Promise<Error>((resolve) => {
      const thread = startPartitionThread(
        { settings: MAIN_SETTINGS, namespace: keys.namespaceId, attribute: 'email', baseline: identities },
        { decided: () => undefined, exported: () => undefined },
        (e) => void thread.close().then(() => resolve(e)),
      );
    });
    expect(error).toMatchObject({
      code: 'MATCHING_PARTITION_FAILED',
      message: 'matching partition thread: email is no mandatory attribute with lossless keys',
    });
    expect(liveMatchingThreads()).toBe(0);
  });
});
