import {
  ALGORITHMS,
  type MatchRecord,
  type MatchResult,
  type Matcher,
  type MatchingSettings,
  buildExhaustiveMatcher,
  buildMatcher,
  normalizeText,
} from '../../src/core/matching';
import { jaroWinklerOverlapFilter } from '../../src/core/matching/algorithms/jaro-winkler';
import { levenshteinOverlapFilter } from '../../src/core/matching/algorithms/levenshtein';
import type { OverlapFilter } from '../../src/core/matching/algorithms/kernel';
import { CandidateCollector } from '../../src/core/matching/indexes/candidate-collector';
import { CombinedIndex } from '../../src/core/matching/indexes/combined-index';
import { OverlapIndex } from '../../src/core/matching/indexes/overlap-index';
import { randomRecords, rng } from './support/random-records';
import { surnamePeople } from './support/surname-people';

/** Every pair as "account|candidate|kind|score|scores", sorted. */
function pairs(result: MatchResult): string[] {
  const out: string[] = [];
  for (const list of result.duplicates.values()) {
    for (const d of list)
      out.push(`${d.accountId}|${d.candidateId}|${d.candidateKind}|${d.score}|${JSON.stringify(d.scores)}`);
  }
  return out.sort();
}

/**
 * The aggregation's call pattern: the baseline in several chunks, then batches; after each batch
 * the accounts without a duplicate join the baseline under a new id (created connector accounts),
 * together with a few unrelated records. Index and oracle see the same sequence.
 */
function replay(
  settings: MatchingSettings,
  records: MatchRecord[],
  baseline: number,
  batch: number,
): { matched: number; calls: number } {
  const index = buildMatcher(settings);
  const oracle = buildExhaustiveMatcher(settings);
  const both = (f: (m: Matcher) => void): void => {
    f(index);
    f(oracle);
  };
  for (let i = 0; i < baseline; i += 40) both((m) => m.addBaseline(records.slice(i, Math.min(baseline, i + 40))));
  let matched = 0;
  let calls = 0;
  for (let i = baseline; i < records.length; i += batch) {
    const news = records.slice(i, i + batch);
    const got = index.match(news, { topK: Infinity });
    const want = oracle.match(news, { topK: Infinity });
    expect(pairs(got)).toEqual(pairs(want));
    expect(got.stats.baseline).toBe(want.stats.baseline);
    expect(got.stats.pairs.matched).toBe(want.stats.pairs.matched);
    matched += got.stats.pairs.matched;
    calls++;
    const created = news
      .filter((r) => !got.duplicates.has(r.id))
      .map((r) => ({ id: `k-${r.id}`, attributes: r.attributes }));
    // an iterable (not an array) and an empty chunk must work too
    both((m) => m.addBaseline(created.values()));
    both((m) => m.addBaseline([]));
  }
  return { matched, calls };
}

describe('incremental matcher == exhaustive oracle over interleaved addBaseline/match calls', () => {
  const records = randomRecords(4242, 300, ['v'], 'r');
  for (const algorithm of ALGORITHMS) {
    it(`${algorithm} at thresholds 0, 60, 80, 95`, () => {
      let matched = 0;
      for (const threshold of [0, 60, 80, 95]) {
        const settings = { attributes: [{ attribute: 'v', algorithm, threshold, mandatory: false }], reviewTopK: 10 };
        const r = replay(settings, records, 120, 25);
        expect(r.calls).toBe(8);
        matched += r.matched;
      }
      expect(matched).toBeGreaterThan(20);
    });
  }

  it('several attributes, mandatory and union, with an empty initial baseline', () => {
    const multi = randomRecords(99, 320, ['a', 'b', 'c'], 'r');
    const combos: MatchingSettings[] = [
      {
        attributes: [
          { attribute: 'a', algorithm: 'name-matcher', threshold: 80, mandatory: true },
          { attribute: 'b', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
          { attribute: 'c', algorithm: 'exact', threshold: 100, mandatory: false },
        ],
        reviewTopK: 10,
      },
      {
        attributes: [
          { attribute: 'a', algorithm: 'dice', threshold: 60, mandatory: false },
          { attribute: 'b', algorithm: 'levenshtein', threshold: 70, mandatory: false },
          { attribute: 'c', algorithm: 'name-matcher', threshold: 85, mandatory: false },
        ],
        reviewTopK: 10,
      },
    ];
    for (const settings of combos) {
      expect(replay(settings, multi, 0, 40).matched).toBeGreaterThan(0);
      expect(replay(settings, multi, 200, 7).matched).toBeGreaterThan(0);
    }
  });

  it('finds a duplicate of an account created in an earlier batch (same-run semantics across batches)', () => {
    const settings: MatchingSettings = {
      attributes: [{ attribute: 'displayName', algorithm: 'name-matcher', threshold: 85, mandatory: true }],
      reviewTopK: 10,
    };
    const m = buildMatcher(settings);
    m.addBaseline([{ id: 'i1', attributes: { displayName: 'Alice Jones' } }]);
    const first = m.match([{ id: 'a1', attributes: { displayName: 'Robert Smith' } }]);
    expect(first.duplicates.size).toBe(0);
    m.addBaseline([{ id: 'key-1', attributes: { displayName: 'Robert Smith' } }]);
    const second = m.match([
      { id: 'a2', attributes: { displayName: 'Bob Smith' } },
      { id: 'a3', attributes: { displayName: 'Robert Smith' } },
    ]);
    expect(second.duplicates.get('a2')?.map((d) => d.candidateId)).toEqual(['key-1']);
    // a3 sees the baseline and the earlier new account of its own batch
    expect(second.duplicates.get('a3')?.map((d) => [d.candidateId, d.candidateKind])).toEqual([
      ['key-1', 'identity'],
      ['a2', 'account'],
    ]);
    // the new records of a call are not kept: a2 is no candidate of a later call
    expect(
      m
        .match([{ id: 'a4', attributes: { displayName: 'Bob Smith' } }])
        .duplicates.get('a4')
        ?.map((d) => d.candidateId),
    ).toEqual(['key-1']);
  });
});

describe('OverlapIndex appended and truncated == built at once', () => {
  const rand = rng(7);
  const texts = randomRecords(31337, 400, ['v'], 'x').map((r) => normalizeText(String(r.attributes.v ?? '')));
  const cases: [string, OverlapFilter<string>][] = [
    ['levenshtein 80', levenshteinOverlapFilter(80)],
    ['levenshtein 55', levenshteinOverlapFilter(55)],
    ['jaro-winkler 90', jaroWinklerOverlapFilter(90)],
    ['jaro-winkler 70', jaroWinklerOverlapFilter(70)],
  ];
  const candidates = (index: OverlapIndex<string>, r: number, out: CandidateCollector): number[] => {
    out.begin();
    index.probe(r, r, out);
    return Array.from(out.list.subarray(0, out.size)).sort((a, b) => a - b);
  };
  for (const [label, filter] of cases) {
    it(label, () => {
      const values: string[][] = [];
      // a low rebuild threshold exercises the rebuilds (fresh token order) along the way
      const grown = new OverlapIndex(filter, values, 16);
      const out = new CandidateCollector(texts.length);
      let checked = 0;
      let i = 0;
      while (i < texts.length) {
        const step = 1 + Math.floor(rand() * 30);
        for (const t of texts.slice(i, i + step)) values.push(t.length > 0 ? [t] : []);
        grown.append(values.length);
        // sometimes drop a tail and add it again (match() does this with its new records)
        if (rand() < 0.3) {
          const keep = Math.max(0, values.length - Math.floor(rand() * 10));
          grown.truncate(keep);
          values.length = keep;
          for (const t of texts.slice(keep, i + step)) values.push(t.length > 0 ? [t] : []);
          grown.append(values.length);
        }
        i += step;
        const fresh = new OverlapIndex(filter, values.slice());
        for (let r = 0; r < values.length; r += 3) {
          expect(candidates(grown, r, out)).toEqual(candidates(fresh, r, out));
          checked++;
        }
      }
      expect(grown.count).toBe(texts.length);
      expect(checked).toBeGreaterThan(1000);
    });
  }
});

describe('combined (surname key, name token) index over interleaved addBaseline/match calls', () => {
  it('== oracle batch after batch: appended, probed and truncated records, new tokens for cached neighbour lists', () => {
    const records = surnamePeople(4242, 160, 260);
    const probe = jest.spyOn(CombinedIndex.prototype, 'probe');
    jest.spyOn(CombinedIndex.prototype, 'estimate').mockReturnValue(0);
    for (const [surname, name] of [
      [100, 80],
      [70, 65],
    ] as const) {
      const settings: MatchingSettings = {
        attributes: [
          { attribute: 'lastName', algorithm: 'double-metaphone', threshold: surname, mandatory: true },
          { attribute: 'displayName', algorithm: 'name-matcher', threshold: name, mandatory: true },
        ],
        reviewTopK: 10,
      };
      expect(replay(settings, records, 0, 40).matched).toBeGreaterThan(20);
      expect(replay(settings, records, 160, 9).matched).toBeGreaterThan(20);
    }
    expect(probe).toHaveBeenCalled();
    jest.restoreAllMocks();
  });

  it('a token added after a neighbour list was kept joins that list (Robert, then Robret and Bob)', () => {
    const settings: MatchingSettings = {
      attributes: [
        { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
      ],
      reviewTopK: 50,
    };
    const person = (id: string, name: string): MatchRecord => ({
      id,
      attributes: { displayName: `${name} Smith`, lastName: 'Smith' },
    });
    const others = ['Alice', 'Carol', 'Dana', 'Erin', 'Fay', 'Gwen', 'Hope', 'Iris', 'June', 'Kim'];
    const baseline = [
      ...Array.from({ length: 10 }, (_, i) => person(`r${i}`, 'Robert')),
      ...Array.from({ length: 60 }, (_, i) => person(`o${i}`, others[i % others.length]!)),
    ];
    const index = buildMatcher(settings);
    const oracle = buildExhaustiveMatcher(settings);
    const both = (f: (m: Matcher) => void): void => {
      f(index);
      f(oracle);
    };
    both((m) => m.addBaseline(baseline));
    const probe = jest.spyOn(CombinedIndex.prototype, 'probe');
    const same = (news: MatchRecord[]): number => {
      const got = index.match(news, { topK: Infinity });
      expect(pairs(got)).toEqual(pairs(oracle.match(news, { topK: Infinity })));
      expect(got.stats.generatorUse['lastName+displayName']).toBe(news.length);
      return got.duplicates.get(news[0]!.id)?.length ?? 0;
    };
    expect(same([person('q1', 'Robert')])).toBe(10); // walks "robert": its neighbour list is kept
    both((m) => m.addBaseline([person('t1', 'Robret'), person('n1', 'Bob')])); // new neighbours of robert
    expect(same([person('q2', 'Robert')])).toBe(12);
    expect(probe).toHaveBeenCalledTimes(2);
    jest.restoreAllMocks();
  });
});
