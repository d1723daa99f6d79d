/**
 * The planned matcher's own rules, with partitions run in this thread: what the run is told when a
 * partition fails or disagrees with it, and a memory limit that leaves room for one partition only.
 */
import { DerivedKeys } from '../../src/core/aggregation/derived-key';
import { decideBatches, type PartitionAccount } from '../../src/core/aggregation/partition-decisions';
import type { StartPartition } from '../../src/core/aggregation/partition-thread';
import { PlannedMatcher } from '../../src/core/aggregation/planned-matcher';
import { buildMatcher } from '../../src/core/matching';
import { inThread } from '../../src/core/matching/parallel/async-matcher';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';

const { identities, accounts } = generate(3, 200, 200);
const fresh: PartitionAccount[] = accounts.map((a, i) => ({
  id: a.id,
  attributes: a.attributes,
  batch: Math.floor(i / 50),
}));

/**
 * Partitions decided here, each batch reported on a later turn; `fail`: the partition's error instead,
 * after `after` batches.
 */
const inThisThread =
  (fail?: { after: number; message: string }): StartPartition =>
  (data, onBatch, onEnd) => {
    const batches = [...decideBatches(data.settings, data.input, new DerivedKeys(data.namespace))];
    let stopped = false;
    void (async () => {
      for (const [n, d] of batches.entries()) {
        await new Promise((r) => setImmediate(r));
        if (stopped) return;
        if (fail && n >= fail.after) return onEnd(new Error(fail.message));
        onBatch(d);
      }
      onEnd();
    })();
    return { close: async () => void (stopped = true) };
  };

const keys = new DerivedKeys();

function planned(start: StartPartition, signal = new AbortController().signal): PlannedMatcher {
  const m = new PlannedMatcher(MAIN_SETTINGS, keys, inThread(buildMatcher(MAIN_SETTINGS)), signal, start);
  m.addBaseline(identities);
  return m;
}

describe('planned matcher', () => {
  it('answers each batch with what its partitions found, as one matcher would', async () => {
    const m = planned(inThisThread());
    const one = buildMatcher(MAIN_SETTINGS);
    one.addBaseline(identities);
    expect(await m.start(fresh, () => 3)).toBe(3);
    let found = 0;
    for (let b = 0; b < 4; b++) {
      const batch = accounts.slice(b * 50, b * 50 + 50);
      const got = await m.match(batch, { topK: Number.POSITIVE_INFINITY });
      const want = one.match(batch, { topK: Number.POSITIVE_INFINITY });
      // Every candidate list, in its order (the form shows the first reviewTopK).
      expect(got.duplicates).toEqual(want.duplicates);
      found += got.duplicates.size;
      // Accounts without a potential duplicate join the baseline, under the run's keys.
      const created = batch.filter((a) => !want.duplicates.has(a.id));
      const joined = created.map((a) => ({ id: keys.keyOf(a.id), attributes: a.attributes }));
      m.addBaseline(
        joined,
        created.map((a) => a.id),
      );
      one.addBaseline(joined);
      expect(got.stats.accounts).toBe(50);
    }
    expect(found).toBeGreaterThan(10);
    m.finish();
    await m.close();
  });

  it('a partition that fails: the batch waiting for it fails with its error', async () => {
    const m = planned(inThisThread({ after: 1, message: 'matching partition thread: out of memory' }));
    await m.start(fresh, () => 2);
    await expect(
      (async () => {
        for (let b = 0; b < 4; b++) await m.match(accounts.slice(b * 50, b * 50 + 50));
      })(),
    ).rejects.toThrow('matching partition thread: out of memory');
    await m.close();
  });

  it('the run creates an account its partition sent to review: refused', async () => {
    const m = planned(inThisThread());
    await m.start(fresh, () => 2);
    const first = accounts.slice(0, 50);
    const { duplicates } = await m.match(first);
    const reviewed = first.find((a) => duplicates.has(a.id))!;
    expect(() => m.addBaseline([{ id: 'k', attributes: reviewed.attributes }], [reviewed.id])).toThrow(
      `partitioned matching: the run created an account for ${reviewed.id}, which its partition did not`,
    );
    await m.close();
  });

  it('the run creates an account under another key, or fewer accounts than the partitions: refused', async () => {
    const m = planned(inThisThread());
    await m.start(fresh, () => 2);
    const first = accounts.slice(0, 50);
    const { duplicates } = await m.match(first);
    const made = first.filter((a) => !duplicates.has(a.id));
    expect(() => m.addBaseline([{ id: 'another-key', attributes: made[0]!.attributes }], [made[0]!.id])).toThrow(
      `partitioned matching: the run gave the account made from ${made[0]!.id} another key`,
    );
    expect(() => m.finish()).toThrow(
      /^partitioned matching: \d+ account\(s\) its partitions created were not created by the run$/,
    );
    await m.close();
  });

  it('a cancel ends the wait for a partition that never reports', async () => {
    const abort = new AbortController();
    let closed = 0;
    const m = planned(() => ({ close: async () => void closed++ }), abort.signal);
    await m.start(fresh, () => 2);
    const waiting = m.match(accounts.slice(0, 50));
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'COMMAND_CANCELLED' });
    await m.close();
    expect(closed).toBe(2);
  });

  it('room for one partition only: no partition starts, the usual matcher goes on', async () => {
    let started = 0;
    const m = planned((...args) => (started++, inThisThread()(...args)));
    expect(await m.start(fresh, (records) => (records > 300 ? 1 : 4))).toBeUndefined();
    const { duplicates } = await m.match(accounts.slice(0, 50), { topK: Number.POSITIVE_INFINITY });
    expect(started).toBe(0);
    expect(duplicates.size).toBeGreaterThan(0);
    await m.close();
  });
});
