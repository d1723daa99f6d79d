import {
  PREFIX_CASES,
  jaroWinkler,
  jaroWinklerKernel,
  jaroWinklerPrefixCase,
} from '../../src/core/matching/algorithms/jaro-winkler';
import { CandidateCollector, type CandidateIndex } from '../../src/core/matching/indexes/candidate-collector';
import { OverlapIndex } from '../../src/core/matching/indexes/overlap-index';
import { rng } from './support/random-records';

type Rand = () => number;
const int = (rand: Rand, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));

/**
 * Strings that sit on the prefix cases' borders: e-mail-like values over a small alphabet, and
 * copies with the edits that move a pair between cases or to the edge of a bound (first
 * character changed, a character inserted or dropped in front, the first two swapped, adjacent
 * swaps all along the string: many transpositions with a 4-character prefix, the weakest case),
 * very short values (shorter than the prefix keys), repeated characters, and non-ASCII ones.
 */
function adversarial(seed: number, n: number): string[] {
  const rand = rng(seed);
  const alphabet = 'aeinrst.@lo';
  const exotic = ['é', 'ß', '中', '😀', 'ø'];
  const base = (): string => {
    const kind = rand();
    if (kind < 0.1) return 'abcdeé'.slice(0, int(rand, 1, 4)); // shorter than or as long as a prefix key
    if (kind < 0.15) return 'a'.repeat(int(rand, 2, 20));
    let s = '';
    for (let i = int(rand, 5, 34); i > 0; i--)
      s += rand() < 0.04 ? exotic[int(rand, 0, exotic.length - 1)]! : alphabet[int(rand, 0, alphabet.length - 1)]!;
    return s;
  };
  const edit = (s: string): string => {
    const op = int(rand, 0, 7);
    const c = alphabet[int(rand, 0, alphabet.length - 1)]!;
    const i = int(rand, 0, Math.max(0, s.length - 2));
    switch (op) {
      case 0:
        return c + s.slice(1); // first character
      case 1:
        return c + s; // inserted in front
      case 2:
        return s.slice(1); // first dropped
      case 3:
        return s.length > 1 ? s[1]! + s[0]! + s.slice(2) : s; // first two swapped
      case 4: {
        // adjacent swaps along the string after a kept prefix
        const a = s.split('');
        for (let j = 4 + int(rand, 0, 1); j + 1 < a.length; j += int(rand, 2, 4)) [a[j], a[j + 1]] = [a[j + 1]!, a[j]!];
        return a.join('');
      }
      case 5:
        return s.slice(0, i) + c + s.slice(i + 1);
      case 6:
        return s.slice(0, i) + s.slice(i + 1);
      default:
        return s + c;
    }
  };
  const out: string[] = [];
  while (out.length < n) {
    const s = out.length > 0 && rand() < 0.7 ? out[int(rand, 0, out.length - 1)]! : base();
    let t = s;
    for (let e = int(rand, 0, 2); e > 0; e--) t = edit(t);
    out.push(t.length > 0 ? t : 'x');
  }
  return out;
}

/** Candidates of record r among records < r. */
function candidates(index: CandidateIndex, r: number, out: CandidateCollector): Set<number> {
  out.begin();
  index.probe(r, r, out);
  return new Set(out.list.subarray(0, out.size));
}

function buildIndex(threshold: number, values: string[][]): CandidateIndex {
  const filter = jaroWinklerKernel.filter(threshold);
  if (filter.kind !== 'custom') throw new Error(`expected the prefix cases at ${threshold}, got ${filter.kind}`);
  return filter.build(values);
}

/** Index of pair (r, c), c < r, in a triangular array. */
const pair = (r: number, c: number): number => (r * (r - 1)) / 2 + c;

const scored = new Map<string[], Float64Array>();
/**
 * The exhaustive oracle: the score of every pair (c < r), computed once per set of texts. A score does
 * not depend on the threshold, so every threshold's expectation reads the same array.
 */
function allScores(texts: string[]): Float64Array {
  let scores = scored.get(texts);
  if (!scores) {
    scores = new Float64Array(pair(texts.length, 0));
    for (let r = 0; r < texts.length; r++)
      for (let c = 0; c < r; c++) scores[pair(r, c)] = jaroWinklerKernel.score(texts[r]!, texts[c]!);
    scored.set(texts, scores);
  }
  return scores;
}

const SEED_11 = adversarial(11, 700);

describe('Jaro-Winkler prefix cases: every pair at or above the threshold is a candidate', () => {
  const THRESHOLDS = [85, 88, 90, 92, 94, 95, 96, 98, 99, 100];
  const sets: [string, string[]][] = [
    ['adversarial edits', SEED_11],
    ['adversarial edits, another seed', adversarial(12, 700)],
  ];
  for (const [label, texts] of sets) {
    it(`${label}, thresholds 85..100`, () => {
      const scores = allScores(texts);
      const values = texts.map((t) => [t]);
      const out = new CandidateCollector(values.length);
      let passing = 0;
      let found = 0;
      let all = 0;
      for (const threshold of THRESHOLDS) {
        const index = buildIndex(threshold, values);
        for (let r = 0; r < values.length; r++) {
          const got = candidates(index, r, out);
          found += got.size;
          all += r;
          for (let c = 0; c < r; c++) {
            if (scores[pair(r, c)]! < threshold) continue;
            passing++;
            if (!got.has(c)) throw new Error(`missed ${JSON.stringify([texts[r], texts[c]])} at ${threshold}`);
          }
        }
      }
      expect(passing).toBeGreaterThan(2000); // the sets have many passing pairs, in every case
      expect(found).toBeLessThan(all / 4); // and the indexes filter
    });
  }

  it('each case holds passing pairs (the sets exercise all five)', () => {
    const texts = SEED_11;
    const scores = allScores(texts);
    const byCase = new Map<number, number>();
    for (let r = 0; r < texts.length; r++) {
      for (let c = 0; c < r; c++) {
        if (scores[pair(r, c)]! < 90 || texts[r] === texts[c]) continue;
        const a = texts[r]!;
        const b = texts[c]!;
        let l = 0;
        while (l < 4 && l < a.length && l < b.length && a[l] === b[l]) l++;
        byCase.set(l, (byCase.get(l) ?? 0) + 1);
      }
    }
    for (const k of PREFIX_CASES) expect(byCase.get(k) ?? 0).toBeGreaterThan(3);
  });

  it('a pair with many transpositions and a shared 4-character prefix passes and is found', () => {
    // 10 of 22 matched characters out of order: Jaro 0.924, Winkler 0.955
    const a = 'abcdefghijklmnopqrstuv';
    const b = 'abcdfehgjilknmopqrstuv';
    expect(jaroWinkler(a, b)).toBeGreaterThanOrEqual(0.9495);
    const index = buildIndex(95, [[a], [b]]);
    expect(candidates(index, 1, new CandidateCollector(2)).has(0)).toBe(true);
  });

  it('values shorter than a prefix key are still found in the lower cases', () => {
    const texts = ['ab', 'ab', 'abc', 'abd', 'abcd', 'abce'];
    const values = texts.map((t) => [t]);
    const index = buildIndex(85, values);
    const out = new CandidateCollector(values.length);
    for (let r = 0; r < texts.length; r++)
      for (let c = 0; c < r; c++)
        if (jaroWinklerKernel.score(texts[r]!, texts[c]!) >= 85) expect(candidates(index, r, out).has(c)).toBe(true);
    expect(candidates(index, 1, out).has(0)).toBe(true);
  });

  it('below 85 the single filter is used', () => {
    expect(jaroWinklerKernel.filter(84).kind).toBe('overlap');
    expect(jaroWinklerKernel.filter(85).kind).toBe('custom');
  });
});

describe('Jaro-Winkler prefix case filters appended and truncated == built at once', () => {
  const texts = adversarial(5, 300);
  for (const [threshold, k] of [
    [95, 0],
    [95, 1],
    [90, 3],
    [85, 4],
  ] as const) {
    it(`threshold ${threshold}, case ${k}`, () => {
      const rand = rng(threshold * 10 + k);
      const filter = jaroWinklerPrefixCase(threshold, k);
      const values: string[][] = [];
      const grown = new OverlapIndex(filter, values, 16);
      const out = new CandidateCollector(texts.length);
      let checked = 0;
      let i = 0;
      while (i < texts.length) {
        const step = 1 + Math.floor(rand() * 25);
        for (const t of texts.slice(i, i + step)) values.push([t]);
        grown.append(values.length);
        if (rand() < 0.3) {
          const keep = Math.max(0, values.length - Math.floor(rand() * 10));
          grown.truncate(keep);
          values.length = keep;
          for (const t of texts.slice(keep, i + step)) values.push([t]);
          grown.append(values.length);
        }
        i += step;
        const fresh = new OverlapIndex(filter, values.slice());
        for (let r = 0; r < values.length; r += 3) {
          expect([...candidates(grown, r, out)].sort((a, b) => a - b)).toEqual(
            [...candidates(fresh, r, out)].sort((a, b) => a - b),
          );
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(500);
    });
  }
});
