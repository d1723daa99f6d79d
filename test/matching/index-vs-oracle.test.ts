import {
  ALGORITHMS,
  type Algorithm,
  type MatchRecord,
  type MatchResult,
  type MatchingSettings,
  buildExhaustiveMatcher,
  buildMatcher,
} from '../../src/core/matching';
import { CombinedIndex } from '../../src/core/matching/indexes/combined-index';
import { KeyIndex } from '../../src/core/matching/indexes/key-index';
import { NameIndex } from '../../src/core/matching/indexes/name-index';
import { generate } from '../../bench/matching-data';
import { randomRecords } from './support/random-records';
import { surnamePeople } from './support/surname-people';

const THRESHOLDS = [50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100];
const LOSSLESS: readonly Algorithm[] = ALGORITHMS; // the name matcher's token index is lossless too

function run(
  settings: MatchingSettings,
  records: MatchRecord[],
  baseline: number,
): { index: MatchResult; oracle: MatchResult } {
  const index = buildMatcher(settings);
  index.addBaseline(records.slice(0, baseline));
  const oracle = buildExhaustiveMatcher(settings);
  oracle.addBaseline(records.slice(0, baseline));
  const news = records.slice(baseline);
  return { index: index.match(news, { topK: Infinity }), oracle: oracle.match(news, { topK: Infinity }) };
}

/** The index matcher's result alone, for the tests that read only its statistics (no oracle to pay for). */
function indexOnly(settings: MatchingSettings, records: MatchRecord[], baseline: number): MatchResult {
  const index = buildMatcher(settings);
  index.addBaseline(records.slice(0, baseline));
  return index.match(records.slice(baseline), { topK: Infinity });
}

/** Every pair as "account|candidate|kind|score|scores", sorted. */
function pairs(result: MatchResult): string[] {
  const out: string[] = [];
  for (const list of result.duplicates.values()) {
    for (const d of list)
      out.push(`${d.accountId}|${d.candidateId}|${d.candidateKind}|${d.score}|${JSON.stringify(d.scores)}`);
  }
  return out.sort();
}

describe('index + scoring == exhaustive oracle (lossless filters)', () => {
  const records = randomRecords(20260101, 260, ['v'], 'r');
  for (const algorithm of LOSSLESS) {
    it(`${algorithm} at thresholds 50..100`, () => {
      let matched = 0;
      for (const threshold of THRESHOLDS) {
        const settings = { attributes: [{ attribute: 'v', algorithm, threshold, mandatory: false }], reviewTopK: 10 };
        const { index, oracle } = run(settings, records, 150);
        const got = pairs(index);
        expect(got).toEqual(pairs(oracle));
        matched += got.length;
        // the filters must actually filter at high thresholds
        if (threshold >= 90) expect(index.stats.pairsCompared).toBeLessThan(oracle.stats.pairsCompared / 2);
      }
      expect(matched).toBeGreaterThan(50); // the data produces matches at every algorithm
    });
  }
});

describe('index == oracle with several attributes', () => {
  const records = randomRecords(77, 300, ['a', 'b', 'c'], 'r');
  const combos: MatchingSettings[] = [
    {
      attributes: [
        { attribute: 'a', algorithm: 'levenshtein', threshold: 80, mandatory: true },
        { attribute: 'b', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
        { attribute: 'c', algorithm: 'dice', threshold: 70, mandatory: false },
      ],
      reviewTopK: 10,
    },
    {
      attributes: [
        { attribute: 'a', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
        { attribute: 'b', algorithm: 'exact', threshold: 100, mandatory: true },
        { attribute: 'c', algorithm: 'jaro-winkler', threshold: 85, mandatory: false },
      ],
      reviewTopK: 10,
    },
    {
      attributes: [
        { attribute: 'a', algorithm: 'dice', threshold: 60, mandatory: false },
        { attribute: 'b', algorithm: 'levenshtein', threshold: 55, mandatory: false },
        { attribute: 'c', algorithm: 'double-metaphone', threshold: 70, mandatory: false },
      ],
      reviewTopK: 10,
    },
    {
      attributes: [
        { attribute: 'a', algorithm: 'jaro-winkler', threshold: 0, mandatory: false },
        { attribute: 'b', algorithm: 'exact', threshold: 100, mandatory: true },
      ],
      reviewTopK: 10,
    },
  ];
  combos.forEach((settings, i) => {
    it(`combination ${i + 1}`, () => {
      const { index, oracle } = run(settings, records, 180);
      expect(pairs(index)).toEqual(pairs(oracle));
      expect(index.stats.pairs.matched).toBe(oracle.stats.pairs.matched);
    });
  });

  it('counts a full scan when the threshold leaves no filter, and none otherwise', () => {
    const noFilter = indexOnly(
      { attributes: [{ attribute: 'a', algorithm: 'jaro-winkler', threshold: 0, mandatory: false }], reviewTopK: 10 },
      records,
      180,
    );
    expect(noFilter.stats.fullScans['jaro-winkler']).toBeGreaterThan(0);
    const clean = randomRecords(5, 200, ['a'], 'x').map((r) => ({
      ...r,
      attributes: { a: `${String(r.attributes.a ?? '')} value` },
    }));
    const filtered = indexOnly(
      { attributes: [{ attribute: 'a', algorithm: 'levenshtein', threshold: 90, mandatory: false }], reviewTopK: 10 },
      clean,
      100,
    );
    expect(filtered.stats.fullScans.levenshtein ?? 0).toBe(0);
  });
});

describe('name matcher with common tokens (postings much longer than the candidates found)', () => {
  // Few first names over many records, surnames rare and varied: a pair needs two tokens with a
  // neighbour, the rare surname is walked, and the common first name only counts; the index
  // checks it against the candidates found instead of walking its long postings.
  const first = ['james', 'jim', 'jamie', 'john', 'j', 'mary', 'maria', 'marie'];
  const stems = ['smith', 'smyth', 'schmidt', 'jones', 'johns', 'brown', 'braun', 'miller', 'muller', 'garcia'];
  const records: MatchRecord[] = Array.from({ length: 420 }, (_, i) => {
    const stem = stems[(i * 7) % stems.length]!;
    const surname = `${stem}${i % 3 === 0 ? '' : String.fromCharCode(97 + ((i * 13) % 26))}`;
    const middle = i % 5 === 0 ? ` ${String.fromCharCode(97 + (i % 26))}` : '';
    return { id: `n${i}`, attributes: { v: `${first[(i * 3) % first.length]!}${middle} ${surname}` } };
  });

  it('gives the oracle pairs at thresholds 60..95, counting common tokens against the candidates', () => {
    const spy = jest.spyOn(
      NameIndex.prototype as unknown as { countByTokens: (...a: unknown[]) => void },
      'countByTokens',
    );
    let matched = 0;
    for (const threshold of [60, 70, 80, 90, 95]) {
      const settings: MatchingSettings = {
        attributes: [{ attribute: 'v', algorithm: 'name-matcher', threshold, mandatory: true }],
        reviewTopK: 10,
      };
      const { index, oracle } = run(settings, records, 300);
      const got = pairs(index);
      expect(got).toEqual(pairs(oracle));
      matched += got.length;
    }
    expect(matched).toBeGreaterThan(100);
    expect(spy).toHaveBeenCalled();
    spy.mockRestore();
  });
});

describe('mandatory attributes intersect their candidates (refine) == oracle', () => {
  // Correlated name and surname (the benchmark's people: nicknames, typos, "Last, First", middle
  // initials), so that pairs pass both mandatory attributes and the intersection has work to do.
  const data = generate(20260301, 300, 220);
  const records = [...data.identities, ...data.accounts];
  const spies = (): jest.SpyInstance[] => [
    jest.spyOn(NameIndex.prototype, 'refine'),
    jest.spyOn(KeyIndex.prototype, 'refine'),
  ];

  // Three surnames for everyone: the sound-alike buckets are then larger than the name index's
  // candidates, so the name index generates and the surname index refines.
  const fewSurnames = records.map((r, i) => ({
    ...r,
    attributes: { ...r.attributes, lastName: ['Smith', 'Schmidt', 'Jones'][i % 3] }, // Smith ~ Schmidt by the secondary code
  }));

  it('surname sound-alike + name matcher at thresholds 50..100: same pairs, fewer scored, both directions used', () => {
    // the single indexes only here (the combined index has its own tests below)
    jest.spyOn(CombinedIndex.prototype, 'estimate').mockReturnValue(Number.POSITIVE_INFINITY);
    const [nameRefine, keyRefine] = spies();
    let matched = 0;
    let scored = 0;
    let oracleScored = 0;
    for (const threshold of THRESHOLDS) {
      for (const [surname, data] of [
        [100, records],
        [70, records],
        [100, fewSurnames],
        [70, fewSurnames],
      ] as const) {
        const settings: MatchingSettings = {
          attributes: [
            { attribute: 'lastName', algorithm: 'double-metaphone', threshold: surname, mandatory: true },
            { attribute: 'displayName', algorithm: 'name-matcher', threshold, mandatory: true },
            { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
          ],
          reviewTopK: 10,
        };
        const { index, oracle } = run(settings, data, 300);
        const got = pairs(index);
        expect(got).toEqual(pairs(oracle));
        matched += got.length;
        scored += index.stats.pairsCompared;
        oracleScored += oracle.stats.pairsCompared;
      }
    }
    expect(matched).toBeGreaterThan(200);
    expect(scored).toBeLessThan(oracleScored / 20);
    expect(nameRefine!).toHaveBeenCalled();
    expect(keyRefine!).toHaveBeenCalled();
    jest.restoreAllMocks();
  });

  it('name matcher with exact e-mail and multi-valued names', () => {
    const multi = records.map((r, i) => ({
      ...r,
      attributes: {
        ...r.attributes,
        displayName:
          i % 4 === 0 ? [r.attributes.displayName, `${String(r.attributes.lastName)} x`] : r.attributes.displayName,
        mail: String(r.attributes.email).replace(/\d+@/, '@'),
      },
    }));
    for (const threshold of [60, 80, 95]) {
      const settings: MatchingSettings = {
        attributes: [
          { attribute: 'displayName', algorithm: 'name-matcher', threshold, mandatory: true },
          { attribute: 'mail', algorithm: 'exact', threshold: 100, mandatory: true },
        ],
        reviewTopK: 10,
      };
      const { index, oracle } = run(settings, multi, 300);
      expect(pairs(index)).toEqual(pairs(oracle));
    }
  });
});

describe('combined (surname key, name token) index == oracle', () => {
  const records = surnamePeople(20261126, 300, 220);
  const settingsAt = (surname: number, name: number): MatchingSettings => ({
    attributes: [
      { attribute: 'lastName', algorithm: 'double-metaphone', threshold: surname, mandatory: true },
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: name, mandatory: true },
      { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
    ],
    reviewTopK: 10,
  });

  it('forced to generate: the oracle pairs at name 50..100, surname codes primary-only and secondary', () => {
    const probe = jest.spyOn(CombinedIndex.prototype, 'probe');
    jest.spyOn(CombinedIndex.prototype, 'estimate').mockReturnValue(0);
    let matched = 0;
    for (const name of [50, 60, 70, 80, 85, 90, 100]) {
      for (const surname of [100, 70]) {
        const { index, oracle } = run(settingsAt(surname, name), records, 300);
        const got = pairs(index);
        expect(got).toEqual(pairs(oracle));
        matched += got.length;
        expect(index.stats.generatorUse['lastName+displayName']).toBeGreaterThan(50);
      }
    }
    expect(matched).toBeGreaterThan(300);
    expect(probe).toHaveBeenCalled();
    jest.restoreAllMocks();
  });

  it('scores the same candidates whichever index generates (the refine makes the set canonical)', () => {
    for (const [surname, name] of [
      [100, 80],
      [70, 60],
      [80, 90],
    ] as const) {
      const stats = (estimate: number): MatchResult['stats'] => {
        jest.spyOn(CombinedIndex.prototype, 'estimate').mockReturnValue(estimate);
        const { stats } = indexOnly(settingsAt(surname, name), records, 300);
        jest.restoreAllMocks();
        return stats;
      };
      const combined = stats(0);
      const single = stats(Number.POSITIVE_INFINITY);
      expect(combined.generatorUse['lastName+displayName']).toBeGreaterThan(50);
      expect(single.generatorUse['lastName+displayName']).toBeUndefined();
      expect(combined.pairs).toEqual(single.pairs);
      expect(combined.pairsCompared).toBe(single.pairsCompared);
    }
  });
});
