/**
 * A lean owner told the run's new accounts ahead (foresee): its shards block each against everything
 * before it, long before its call, and each call keeps the candidates that exist in the run by then.
 * The aggregation's pattern is replayed on it and on one in-order thread: accounts "approved" earlier
 * are not matched but join the baseline, accounts with a candidate go to review (never join), the
 * others join under a new id. Every call must give the same duplicates, scores and order.
 */
import { type MatchRecord, type MatchResult, type MatchingSettings, buildMatcher } from '../../src/core/matching';
import { buildParallelMatcher, type ParallelOptions } from '../../src/core/matching/parallel/parallel-matcher';
import { inProcessShard, type Shard } from '../../src/core/matching/parallel/shard';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';
import { randomRecords } from './support/random-records';
import { RULES } from './support/two-rules';
import { scaled } from '../support/time-factor';

/** In-process shards that count what they are asked: accounts blocked in a call, records blocked ahead. */
function counting(): { inCalls: () => number; ahead: () => number; startShard: ParallelOptions['startShard'] } {
  let inCalls = 0;
  let ahead = 0;
  return {
    inCalls: () => inCalls,
    ahead: () => ahead,
    startShard: (settings) => {
      const real = inProcessShard(settings);
      return {
        ...real,
        block: (cols, from, to) => {
          inCalls += to - from;
          return real.block(cols, from, to);
        },
        blockHeld: (from, to) => {
          ahead += to - from;
          return real.blockHeld(from, to);
        },
      };
    },
  };
}

const approved = (r: MatchRecord): boolean => r.id.endsWith('7');
/**
 * What the call decides: the ranked duplicates per account (in order) and the counts of accounts.
 * Not the work counts (pairs compared, by outcome, candidates per account): the shards compared the
 * pairs with accounts the call drops too (checked apart: never fewer).
 */
function shown(r: MatchResult): string {
  const { accounts, baseline, accountsWithDuplicates, truncated, accountsMissingMandatory, accountsWithoutValues } =
    r.stats;
  const counts = {
    accounts,
    baseline,
    accountsWithDuplicates,
    truncated,
    accountsMissingMandatory,
    accountsWithoutValues,
  };
  return JSON.stringify({ duplicates: [...r.duplicates.entries()], counts });
}

interface Replayed {
  /** Accounts with duplicates (sent to review). */
  found: number;
  /** Their ids, per batch. */
  reviewed: string[][];
  /** Pairs the lean owner's calls counted as compared. */
  pairsCompared: number;
  /** Accounts whose candidates came from a full scan of an index (the same on both matchers). */
  fullScans: number;
}

/**
 * The aggregation's calls on both matchers; `lookahead`: batches foreseen before the one matched
 * (Infinity: all of them before the first call).
 */
async function replay(
  settings: MatchingSettings,
  baseline: readonly MatchRecord[],
  news: readonly MatchRecord[],
  batch: number,
  lookahead: number,
  shards: number,
  startShard: ParallelOptions['startShard'] = inProcessShard,
): Promise<Replayed> {
  const single = buildMatcher(settings);
  const m = buildParallelMatcher(settings, {}, { shards, startShard, minRecords: 0, lean: true });
  const batches: MatchRecord[][] = [];
  for (let i = 0; i < news.length; i += batch) batches.push(news.slice(i, i + batch));
  const out: Replayed = { found: 0, reviewed: [], pairsCompared: 0, fullScans: 0 };
  try {
    for (let i = 0; i < baseline.length; i += 97) {
      single.addBaseline(baseline.slice(i, i + 97));
      m.addBaseline(baseline.slice(i, i + 97));
    }
    let foreseen = 0;
    for (let b = 0; b < batches.length; b++) {
      while (foreseen < batches.length && foreseen <= b + lookahead) expect(m.foresee(batches[foreseen++]!)).toBe(true);
      const toMatch = batches[b]!.filter((r) => !approved(r));
      const opts = b % 2 === 0 ? {} : { topK: Infinity };
      const want = single.match(toMatch, opts);
      const got = await m.match(toMatch, opts);
      expect(shown(got)).toBe(shown(want));
      expect(got.stats.pairsCompared).toBeGreaterThanOrEqual(want.stats.pairsCompared);
      expect(got.stats.fullScans).toEqual(want.stats.fullScans);
      out.fullScans += Object.values(want.stats.fullScans).reduce((a, b) => a + b, 0);
      expect(got.stats.pairs.matched).toBeGreaterThanOrEqual(want.stats.pairs.matched);
      out.found += want.stats.accountsWithDuplicates;
      out.pairsCompared += got.stats.pairsCompared;
      out.reviewed.push(toMatch.filter((r) => want.duplicates.has(r.id)).map((r) => r.id));
      const joining = batches[b]!.filter((r) => approved(r) || !want.duplicates.has(r.id));
      const created = joining.map((r) => ({ ...r, id: `k-${r.id}` }));
      single.addBaseline(created);
      m.addBaseline(
        created,
        joining.map((r) => r.id),
      );
    }
  } finally {
    await m.close();
  }
  return out;
}

describe('a lean owner that foresees the accounts: blocked ahead, each call keeps what exists by then', () => {
  const records = randomRecords(2029, 800, ['a', 'b', 'c'], 'f');

  for (const shards of [1, 2, 4]) {
    it(`${shards} shard(s): the same results as one thread in order, foreseen just before, two batches or all ahead`, async () => {
      let fullScans = 0;
      for (const settings of RULES) {
        for (const lookahead of [0, 2, Infinity]) {
          const c = counting();
          const { found, fullScans: scans } = await replay(
            settings,
            records.slice(0, 300),
            records.slice(300),
            60,
            lookahead,
            shards,
            c.startShard,
          );
          // Enough accounts with candidates, reviewed and created ones among them, that equal results say something.
          expect(found).toBeGreaterThan(20);
          expect(found).toBeLessThan(400);
          fullScans += scans;
          // Every foreseen account blocked ahead once, none in a call.
          expect([c.ahead(), c.inCalls()]).toEqual([500, 0]);
        }
        // No baseline: the run's accounts only meet each other.
        expect((await replay(settings, [], records.slice(0, 400), 90, 3, shards)).found).toBeGreaterThan(10);
      }
      // Full scans are carried to the right accounts (replay compares them): some happen.
      expect(fullScans).toBeGreaterThan(0);
    });
  }

  it(
    'main configuration (combined index) at 10k x 2k: the same duplicates as one thread',
    async () => {
      const { identities, accounts } = generate(20261129, 10_000, 2_000);
      expect((await replay(MAIN_SETTINGS, identities, accounts, 250, 4, 2)).found).toBeGreaterThan(100);
    },
    scaled(120_000),
  );

  it('each call tells every shard the accounts of the call before it that never joined; later blocks skip them', async () => {
    const news = records.slice(300);
    const run = async (forward: boolean): Promise<{ replayed: Replayed; excluded: number[][] }> => {
      const excluded: number[][] = [];
      const startShard = (settings: MatchingSettings): Shard => {
        const real = inProcessShard(settings);
        const told: number[] = [];
        excluded.push(told);
        return {
          ...real,
          // Blocked a turn later, as a child job is: more accounts are decided by then.
          blockHeld: (from, to) => new Promise((r) => setImmediate(r)).then(() => real.blockHeld(from, to)),
          exclude: (list) => {
            told.push(...list);
            if (forward) real.exclude(list);
          },
        };
      };
      return { replayed: await replay(RULES[0]!, records.slice(0, 300), news, 60, 2, 2, startShard), excluded };
    };
    const told = await run(true);
    const notTold = await run(false);
    // Every batch's reviewed accounts but the last's (no call follows it), as the shards number them.
    const reviewed = told.replayed.reviewed.slice(0, -1).flat();
    expect(reviewed.length).toBeGreaterThan(20);
    const want = reviewed.map((id) => 300 + news.findIndex((r) => r.id === id));
    expect(told.excluded).toEqual([want, want]);
    // Fewer pairs scored for the same results (replay compares each call with one thread in order).
    expect(told.replayed.found).toBe(notTold.replayed.found);
    expect(told.replayed.pairsCompared).toBeLessThan(notTold.replayed.pairsCompared);
  });

  it('decides at its first foresee(): no shards running (or not lean) means no blocking ahead, for the whole run', async () => {
    const settings = RULES[0]!;
    const late = buildParallelMatcher(
      settings,
      {},
      { shards: 1, startShard: inProcessShard, minRecords: 10_000, lean: true },
    );
    const notLean = buildParallelMatcher(settings, {}, { shards: 1, startShard: inProcessShard, minRecords: 0 });
    try {
      for (const m of [late, notLean]) {
        m.addBaseline(records.slice(0, 300));
        expect(m.foresee(records.slice(300, 310))).toBe(false);
        // Matched and joined as before: nothing foreseen is required.
        await m.match(records.slice(300, 310));
        m.addBaseline(records.slice(300, 305));
        expect(m.foresee(records.slice(310, 320))).toBe(false);
      }
    } finally {
      await Promise.all([late.close(), notLean.close()]);
    }
  });

  it('refuses to match or join accounts it was not told of, or out of their order', async () => {
    const m = buildParallelMatcher(RULES[0]!, {}, { shards: 2, startShard: inProcessShard, minRecords: 0, lean: true });
    try {
      m.addBaseline(records.slice(0, 300));
      expect(m.foresee(records.slice(300, 320))).toBe(true);
      await expect(m.match(records.slice(320, 321))).rejects.toThrow(/without having been foreseen/);
      await expect(m.match([records[305]!, records[303]!])).rejects.toThrow(
        /without having been foreseen in this order/,
      );
      await m.match(records.slice(300, 310));
      // An account matched in an earlier call comes before any later one.
      await expect(m.match([records[309]!])).rejects.toThrow(/without having been foreseen/);
      expect(() => m.addBaseline([records[330]!], [records[330]!.id])).toThrow(/was not foreseen/);
      expect(() => m.addBaseline([records[301]!])).toThrow(/only foreseen accounts join the baseline/);
      m.addBaseline([{ ...records[301]!, id: 'k-1' }], [records[301]!.id]);
      expect(() => m.foresee([records[310]!])).toThrow(/foreseen twice/);
    } finally {
      await m.close();
    }
    // Its shards are gone: nothing is matched or blocked ahead in-thread instead.
    expect(() => m.foresee([records[340]!])).toThrow(/foresees nothing after close/);
    await expect(m.match([records[310]!])).rejects.toThrow(/matches nothing after close/);
  });

  it('a failed block ahead fails the call that needs it once every slice it waits for has ended; no stray rejection', async () => {
    let ended = 0;
    const failing = (settings: MatchingSettings): Shard => {
      const real = inProcessShard(settings);
      return {
        ...real,
        blockHeld: async (from, to) => {
          // The second batch's first part (records 320..384) is a child job lost for good, at once;
          // the other parts take longer.
          await new Promise((r) => setTimeout(r, from === 320 ? 0 : 20));
          ended++;
          if (from === 320) throw new Error('child job lost');
          return real.blockHeld(from, to);
        },
      };
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    const m = buildParallelMatcher(RULES[0]!, {}, { shards: 2, startShard: failing, minRecords: 0, lean: true });
    try {
      m.addBaseline(records.slice(0, 300));
      m.foresee(records.slice(300, 320));
      m.foresee(records.slice(320, 450));
      // The first batch's slice is fine: its call succeeds although a later one has failed already.
      await m.match(records.slice(300, 320));
      await expect(m.match(records.slice(320, 450))).rejects.toThrow('child job lost');
      expect(ended).toBe(3);
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await m.close();
    }
  });
});
