import {
  type MatchRecord,
  type MatchResult,
  type Matcher,
  type MatchingSettings,
  buildMatcher,
} from '../../src/core/matching';
import type { AsyncMatcher } from '../../src/core/matching/parallel/async-matcher';
import { type ParallelOptions, buildParallelMatcher } from '../../src/core/matching/parallel/parallel-matcher';
import { OWNER_CHUNK, OWNER_CHUNK_WITH_SHARDS } from '../../src/core/matching/parallel/loop-turns';
import { inProcessShard } from '../../src/core/matching/parallel/shard';
import type { BlockedSlice } from '../../src/core/matching/blocked-slice';
import { SliceBlocker } from '../../src/core/matching/slice-blocking';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';
import { randomRecords } from './support/random-records';
import { RULES } from './support/two-rules';
import { visible, visibleAcrossSplits } from './support/visible-result';
import { PEOPLE_AND_LOGIN_SETTINGS } from './support/people-settings';
import { scaled } from '../support/time-factor';

const PEOPLE = PEOPLE_AND_LOGIN_SETTINGS;

/** One thread's answers to the aggregation's call pattern (below), to compare a sharded matcher against. */
interface SingleTrace {
  estimate?: ReturnType<Matcher['estimate']>;
  calls: Array<{ news: MatchRecord[]; opts: { topK?: number }; want: MatchResult; created: MatchRecord[] }>;
  found: number;
}

/**
 * One thread's trace, computed once per (settings, records, baseline, batch, estimate): the single
 * matcher is synchronous and sees nothing of the sharded one, so every shard count of a file is
 * compared with the same answers (before, each replay computed them again).
 */
const traces = new WeakMap<MatchingSettings, WeakMap<readonly MatchRecord[], Map<string, SingleTrace>>>();

function singleTrace(
  settings: MatchingSettings,
  records: readonly MatchRecord[],
  baseline: number,
  batch: number,
  estimate: boolean,
): SingleTrace {
  const bySettings = traces.get(settings) ?? new WeakMap<readonly MatchRecord[], Map<string, SingleTrace>>();
  traces.set(settings, bySettings);
  const byRecords = bySettings.get(records) ?? new Map<string, SingleTrace>();
  bySettings.set(records, byRecords);
  const key = `${baseline}/${batch}/${estimate}`;
  const known = byRecords.get(key);
  if (known) return known;
  const single: Matcher = buildMatcher(settings);
  for (let i = 0; i < baseline; i += 97) single.addBaseline(records.slice(i, Math.min(baseline, i + 97)));
  const trace: SingleTrace = { calls: [], found: 0 };
  if (estimate) trace.estimate = single.estimate(records.slice(baseline));
  for (let i = baseline, call = 0; i < records.length; i += batch, call++) {
    const news = records.slice(i, i + batch);
    const opts = call % 2 === 0 ? {} : { topK: Infinity };
    const want = single.match(news, opts);
    const created = news.filter((r) => !want.duplicates.has(r.id)).map((r) => ({ ...r, id: `k-${r.id}` }));
    trace.calls.push({ news, opts, want, created });
    trace.found += want.stats.accountsWithDuplicates;
    single.addBaseline(created);
  }
  byRecords.set(key, trace);
  return trace;
}

/**
 * The aggregation's call pattern on both matchers: the baseline in chunks, then batches, each
 * batch's accounts without duplicates joining the baseline under a new id. topK: the settings' own
 * for even calls, every candidate for odd ones.
 */
async function replay(
  settings: MatchingSettings,
  records: readonly MatchRecord[],
  baseline: number,
  batch: number,
  shards: number,
  estimate = false,
  parallel: Partial<ParallelOptions> = {},
): Promise<number> {
  const trace = singleTrace(settings, records, baseline, batch, estimate);
  const sharded: AsyncMatcher = buildParallelMatcher(
    settings,
    {},
    { shards, startShard: inProcessShard, minRecords: 0, ...parallel },
  );
  try {
    for (let i = 0; i < baseline; i += 97) sharded.addBaseline(records.slice(i, Math.min(baseline, i + 97)));
    if (estimate) {
      const want = trace.estimate;
      const got = await sharded.estimate(records.slice(baseline));
      expect(want).toBeDefined();
      expect({ ...got, parameters: { ...got?.parameters, estimatedAt: '' } }).toEqual({
        ...want,
        parameters: { ...want?.parameters, estimatedAt: '' },
      });
    }
    for (const { news, opts, want, created } of trace.calls) {
      const got = await sharded.match(news, opts);
      expect(visible(got)).toEqual(visible(want));
      // Same order of accounts and of candidates, not only the same sets.
      expect(JSON.stringify(visibleAcrossSplits(got))).toBe(JSON.stringify(visibleAcrossSplits(want)));
      sharded.addBaseline(created);
    }
    return trace.found;
  } finally {
    await sharded.close();
  }
}

describe('sharded matching == one thread (phase 1 in slices, merged in order, phase 2 by the owner)', () => {
  const records = randomRecords(2027, 700, ['a', 'b', 'c'], 'r');

  // 0: in-thread, the owner blocking in chunks with turns of the event loop between them.
  for (const shards of [0, 1, 2, 4]) {
    it(`rules model, ${shards + 1} thread(s), with and without mandatory attributes`, async () => {
      for (const settings of RULES) {
        expect(await replay(settings, records, 300, 130, shards)).toBeGreaterThan(10);
        // an empty baseline: every account sees only the earlier new accounts of its batch
        expect(await replay(settings, records, 0, 350, shards)).toBeGreaterThan(10);
      }
    });
  }

  it(
    'probabilistic model: the estimate from sharded blocking, then every batch',
    async () => {
      const { identities, accounts } = generate(11, 800, 800);
      const all = [...identities, ...accounts];
      // The two estimating cells share one batch size (two calls: 500, then 300 with every candidate),
      // so one thread's trace serves both; they differ in what they test, the shard count (was 400 for
      // the in-thread cell: also two calls, one of each topK). Three calls without an estimate below.
      expect(await replay(PEOPLE, all, identities.length, 500, 2, true)).toBeGreaterThan(100);
      expect(await replay(PEOPLE, all, identities.length, 300, 1, false)).toBeGreaterThan(100);
      expect(await replay(PEOPLE, all, identities.length, 500, 0, true)).toBeGreaterThan(100);
      // A hang guard: three replays of 1,600 records take about 30 s on a loaded 2-core machine.
    },
    scaled(300_000),
  );

  it('same-run duplicates: an account of a later slice finds one of an earlier slice', async () => {
    const settings: MatchingSettings = {
      attributes: [{ attribute: 'name', algorithm: 'name-matcher', threshold: 85, mandatory: true }],
      reviewTopK: 10,
    };
    const news = Array.from({ length: 64 }, (_, i) => ({
      id: `a${i}`,
      attributes: {
        name: i === 63 ? 'Robert Smith' : i === 0 ? 'Bob Smith' : `Person ${String.fromCharCode(97 + (i % 26))}${i}`,
      },
    }));
    const m = buildParallelMatcher(settings, {}, { shards: 3, startShard: inProcessShard, minRecords: 0 });
    try {
      const result = await m.match(news);
      expect(result.duplicates.get('a63')?.map((d) => [d.candidateId, d.candidateKind])).toEqual([['a0', 'account']]);
    } finally {
      await m.close();
    }
  });
});

describe('a lean owner (remote shards, rules model): the shards block every slice, the owner keeps ids', () => {
  const records = randomRecords(2027, 700, ['a', 'b', 'c'], 'r');

  /** In-process shards that count the accounts they block. */
  function counting(): { blocked: () => number; startShard: ParallelOptions['startShard'] } {
    let blocked = 0;
    return {
      blocked: () => blocked,
      startShard: (settings) => {
        const real = inProcessShard(settings);
        return {
          ...real,
          block: (cols, from, to) => {
            blocked += to - from;
            return real.block(cols, from, to);
          },
        };
      },
    };
  }

  for (const shards of [1, 2, 4]) {
    it(`${shards} shard(s): the same results as one thread, shards started before the calls, during them or at the first`, async () => {
      for (const settings of RULES) {
        // minRecords 0: the shards start with the baseline; 450: during the calls (300 + 130 + 130);
        // 100: part-way through the baseline (the owner's engine holds its first records only).
        for (const minRecords of [0, 450, 100]) {
          const c = counting();
          const lean = { lean: true, minRecords, startShard: c.startShard };
          expect(await replay(settings, records, 300, 130, shards, false, lean)).toBeGreaterThan(10);
          // Every account of every call once the shards run (4 calls, 400 accounts); at 450 the first
          // calls (300 records, created accounts joining them) stay with the owner.
          if (minRecords === 450) expect([c.blocked() > 0, c.blocked() < 400]).toEqual([true, true]);
          else expect(c.blocked()).toBe(400);
        }
        expect(await replay(settings, records, 0, 350, shards, false, { lean: true })).toBeGreaterThan(10);
      }
    });
  }

  it('every call goes to the shards once they run, also one account or none', async () => {
    const settings = RULES[0]!;
    const c = counting();
    const m = buildParallelMatcher(settings, {}, { shards: 2, startShard: c.startShard, minRecords: 0, lean: true });
    const single = buildMatcher(settings);
    try {
      m.addBaseline(records.slice(0, 300));
      single.addBaseline(records.slice(0, 300));
      for (const news of [records.slice(300, 301), [], records.slice(301, 305)]) {
        expect(visible(await m.match(news))).toEqual(visible(single.match(news)));
      }
      expect(c.blocked()).toBe(5);
      const empty = await m.match([]);
      expect(empty.stats.baseline).toBe(300);
    } finally {
      await m.close();
    }
    // Its engine lacks the records the shards hold: no silent in-thread answer after close().
    await expect(m.match(records.slice(305, 306))).rejects.toThrow(/lean owner matches nothing after close/);
  });

  it('a failing shard fails the call once every slice has ended; the matcher takes the next call', async () => {
    let calls = 0;
    let ended = 0;
    const m = buildParallelMatcher(
      RULES[0]!,
      {},
      {
        shards: 2,
        minRecords: 0,
        lean: true,
        startShard: (settings) => {
          const real = inProcessShard(settings);
          const n = calls++;
          return {
            ...real,
            block: async (cols, from, to) => {
              await new Promise((r) => setTimeout(r, n === 0 ? 0 : 20));
              ended++;
              if (n === 0) throw new Error('child job lost');
              return real.block(cols, from, to);
            },
          };
        },
      },
    );
    try {
      m.addBaseline(records.slice(0, 300));
      await expect(m.match(records.slice(300, 400))).rejects.toThrow('child job lost');
      expect(ended).toBe(2);
      await expect(m.match(records.slice(300, 400))).rejects.toThrow('child job lost');
    } finally {
      await m.close();
    }
  });

  it('refuses the probabilistic model and shards that memory may cap (the owner could not take over)', () => {
    const start = inProcessShard;
    expect(() => buildParallelMatcher(PEOPLE, {}, { shards: 1, startShard: start, minRecords: 0, lean: true })).toThrow(
      /lean owner needs the rules model/,
    );
    expect(() =>
      buildParallelMatcher(
        RULES[0]!,
        {},
        { shards: 1, startShard: start, minRecords: 0, lean: true, maxShards: () => 1 },
      ),
    ).toThrow(/never capped/);
  });
});

describe('the combined (surname key, name token) index across threads', () => {
  it(
    'main configuration at 10k: the same duplicates and counts with 1 and 2 threads, whichever index each thread chose',
    async () => {
      const { identities, accounts } = generate(20261120, 10_000, 1_000);
      const single = buildMatcher(MAIN_SETTINGS);
      const sharded = buildParallelMatcher(MAIN_SETTINGS, {}, { shards: 1, startShard: inProcessShard, minRecords: 0 });
      const combined = `${MAIN_SETTINGS.attributes[0]!.attribute}+${MAIN_SETTINGS.attributes[1]!.attribute}`;
      let viaCombined = 0;
      let found = 0;
      try {
        single.addBaseline(identities);
        sharded.addBaseline(identities);
        for (let i = 0; i < accounts.length; i += 250) {
          const batch = accounts.slice(i, i + 250);
          const want = single.match(batch, { topK: Infinity });
          const got = await sharded.match(batch, { topK: Infinity });
          expect(JSON.stringify(visibleAcrossSplits(got))).toBe(JSON.stringify(visibleAcrossSplits(want)));
          viaCombined += want.stats.generatorUse[combined] ?? 0;
          found += want.stats.accountsWithDuplicates;
          single.addBaseline(batch);
          sharded.addBaseline(batch);
        }
      } finally {
        await sharded.close();
      }
      // The case this guards: accounts whose candidates came from the combined index.
      expect(viaCombined).toBeGreaterThan(0);
      expect(found).toBeGreaterThan(100);
    },
    scaled(120_000),
  );
});

describe('a long call lets the event loop turn (run-lock and job-lock renewals, progress, cancels)', () => {
  const { identities, accounts } = generate(5, 300, 600);

  /** Turns of the event loop (check phases) seen while `call` runs. */
  async function turnsDuring<T>(call: () => Promise<T>): Promise<{ value: T; turns: number }> {
    let turns = 0;
    let done = false;
    const tick = (): void => {
      turns++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const value = await call();
    done = true;
    const seen = turns;
    return { value, turns: seen };
  }

  for (const shards of [0, 1]) {
    it(`probabilistic estimate and match over ${accounts.length} accounts, ${shards + 1} thread(s): a turn per chunk of the owner's slice`, async () => {
      const m = buildParallelMatcher(PEOPLE, {}, { shards, startShard: inProcessShard, minRecords: 0 });
      try {
        m.addBaseline(identities);
        // With slices out the owner turns more often: a child this process serves needs its event loop.
        const chunk = shards > 0 ? OWNER_CHUNK_WITH_SHARDS : OWNER_CHUNK;
        const ownChunks = Math.ceil(accounts.length / (shards + 1) / chunk);
        const estimated = await turnsDuring(() => m.estimate(accounts));
        expect(estimated.value?.accounts).toBe(accounts.length);
        expect(estimated.turns).toBeGreaterThanOrEqual(ownChunks);
        const matched = await turnsDuring(() => m.match(accounts));
        expect(matched.value.stats.accounts).toBe(accounts.length);
        expect(matched.turns).toBeGreaterThanOrEqual(ownChunks);
        // While a call yields, the baseline must not change under it.
        const pending = m.match(accounts);
        expect(() => m.addBaseline(identities.slice(0, 1))).toThrow(/during a match/);
        await pending;
      } finally {
        await m.close();
      }
    });
  }

  /** The slices blockSlice returned while `call` ran, in order: [from, count] each. */
  async function slicesDuring<T>(call: () => Promise<T>): Promise<{ value: T; slices: [number, number][] }> {
    const spy = jest.spyOn(SliceBlocker.prototype, 'blockSlice');
    try {
      const value = await call();
      // Read before mockRestore(), which clears them.
      const slices = spy.mock.results.map((r) => {
        const s = r.value as BlockedSlice;
        return [s.from, s.count] as [number, number];
      });
      return { value, slices };
    } finally {
      spy.mockRestore();
    }
  }

  /** One slice per account, in order, covering 0..n-1. */
  const onePerAccount = (n: number): [number, number][] => Array.from({ length: n }, (_, i) => [i, 1]);

  it('an account that uses up the turn ends its chunk: a turn after every one, the same answers', async () => {
    // turnMs 0: each chunk's time is up after its first account, as with a careless list (nothing
    // mandatory), where one account of a 20k run costs 80 ms and 128 of them held the loop long enough
    // for the run lock to lapse.
    for (const settings of RULES) {
      const m = buildParallelMatcher(settings, {}, { shards: 0, startShard: inProcessShard, minRecords: 0, turnMs: 0 });
      try {
        const single = buildMatcher(settings);
        const baseline = randomRecords(7, 300, ['a', 'b', 'c'], 'b');
        m.addBaseline(baseline);
        single.addBaseline(baseline);
        const news = randomRecords(8, 40, ['a', 'b', 'c'], 'n');
        const { value, slices } = await slicesDuring(() => turnsDuring(() => m.match(news)));
        expect(slices).toEqual(onePerAccount(news.length));
        expect(value.turns).toBeGreaterThanOrEqual(news.length);
        expect(JSON.stringify(visibleAcrossSplits(value.value))).toBe(
          JSON.stringify(visibleAcrossSplits(single.match(news))),
        );
      } finally {
        await m.close();
      }
    }
    // While the time is not up (a clock that stands still) a call of 40 accounts is one chunk.
    const m = buildParallelMatcher(
      RULES[0]!,
      {},
      { shards: 0, startShard: inProcessShard, minRecords: 0, now: () => 0 },
    );
    try {
      m.addBaseline(randomRecords(7, 300, ['a', 'b', 'c'], 'b'));
      const { slices } = await slicesDuring(() => m.match(randomRecords(8, 40, ['a', 'b', 'c'], 'n')));
      expect(slices).toEqual([[0, 40]]);
    } finally {
      await m.close();
    }
  });

  it('the estimate feed ends its chunks on the same turn', async () => {
    const { identities, accounts } = generate(5, 200, 60);
    const want = buildMatcher(PEOPLE);
    want.addBaseline(identities);
    const m = buildParallelMatcher(PEOPLE, {}, { shards: 0, startShard: inProcessShard, minRecords: 0, turnMs: 0 });
    try {
      m.addBaseline(identities);
      const feed = m.beginEstimate();
      const { value, slices } = await slicesDuring(async () => {
        await feed.add(accounts);
        return feed.finish();
      });
      expect(slices).toEqual(onePerAccount(accounts.length));
      const expected = want.estimate(accounts);
      expect(expected).toBeDefined();
      expect({ ...value, parameters: { ...value?.parameters, estimatedAt: '' } }).toEqual({
        ...expected,
        parameters: { ...expected?.parameters, estimatedAt: '' },
      });
    } finally {
      await m.close();
    }
  });
});

describe('costly accounts start the threads below minRecords (a careless list)', () => {
  /** A clock that moves `step` ms at every reading: every account the owner blocks costs about that. */
  const ticking = (step: number): (() => number) => {
    let t = 0;
    return () => (t += step);
  };

  const cases = [
    ['accounts that cost more than preparing a copy of the records', 1000, 1],
    ['accounts that cost nothing measurable', 0, 0],
  ] as const;
  // lean: remote shards (child jobs), which take every call once they run.
  for (const [label, step, starts, lean] of cases.flatMap((c) => [false, true].map((l) => [...c, l] as const))) {
    it(`${label}: ${starts} shard(s) started, the same answers${lean ? ' (a lean owner)' : ''}`, async () => {
      const settings = RULES[1]!;
      let started = 0;
      const m = buildParallelMatcher(
        settings,
        {},
        {
          shards: 1,
          startShard: (s) => {
            started++;
            return inProcessShard(s);
          },
          minRecords: 1_000_000,
          now: ticking(step),
          lean,
        },
      );
      const single = buildMatcher(settings);
      try {
        const baseline = randomRecords(11, 200, ['a', 'b', 'c'], 'b');
        m.addBaseline(baseline);
        single.addBaseline(baseline);
        const news = randomRecords(12, 120, ['a', 'b', 'c'], 'n');
        const calls = [news.slice(0, 60), news.slice(60)].map((batch, i) => ({ batch, i }));
        for (const { batch, i } of calls) {
          // As the run does: its accounts foreseen before each call (a hint while no shard blocks ahead).
          m.foresee(batch);
          const got = await m.match(batch);
          expect(JSON.stringify(visibleAcrossSplits(got))).toBe(
            JSON.stringify(visibleAcrossSplits(single.match(batch))),
          );
          // The first call measures the owner's cost per account: nothing starts before it.
          if (i === 0) expect(started).toBe(0);
        }
        expect(started).toBe(starts);
      } finally {
        await m.close();
      }
    });
  }
});
