/**
 * The scoring shortcuts of phase 1 give the scores of the plain computations, bit for bit: Jaro's
 * stamped flags and copied code units (against the former fill-and-charCodeAt version, kept here
 * as the oracle), the shared prepared names and metaphone codes compared by pointer, and the id
 * hashes phase 1 tests before the ids themselves.
 */
import { doubleMetaphone, metaphoneScore } from '../../src/core/matching/algorithms/double-metaphone';
import { jaro, jaroWinkler } from '../../src/core/matching/algorithms/jaro-winkler';
import { type NameValue, nameScore, prepareName } from '../../src/core/matching/algorithms/name-similarity';
import { RecordIds, idHash } from '../../src/core/matching/record-ids';
import { rng } from '../../bench/matching-data';

/** Jaro as it was before the shortcuts: cleared byte flags, both strings read through charCodeAt. */
function jaroOracle(a: string, b: string): number {
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  if (a === b) return 1;
  const fa = new Uint8Array(la);
  const fb = new Uint8Array(lb);
  const window = Math.max(0, ((la > lb ? la : lb) >> 1) - 1);
  let m = 0;
  for (let i = 0; i < la; i++) {
    const c = a.charCodeAt(i);
    const lo = i - window > 0 ? i - window : 0;
    const hi = i + window + 1 < lb ? i + window + 1 : lb;
    for (let j = lo; j < hi; j++) {
      if (fb[j] === 0 && b.charCodeAt(j) === c) {
        fa[i] = 1;
        fb[j] = 1;
        m++;
        break;
      }
    }
  }
  if (m === 0) return 0;
  let t = 0;
  let k = 0;
  for (let i = 0; i < la; i++) {
    if (fa[i] === 0) continue;
    while (fb[k] === 0) k++;
    if (a.charCodeAt(i) !== b.charCodeAt(k)) t++;
    k++;
  }
  return (m / la + m / lb + (m - t / 2) / m) / 3;
}

function jaroWinklerOracle(a: string, b: string): number {
  const j = jaroOracle(a, b);
  if (j < 0.7) return j;
  const max = Math.min(4, a.length, b.length);
  let l = 0;
  while (l < max && a.charCodeAt(l) === b.charCodeAt(l)) l++;
  return j + l * 0.1 * (1 - j);
}

const EDGE: [string, string][] = [
  ['', ''],
  ['', 'a'],
  ['a', ''],
  ['a', 'a'],
  ['a', 'b'],
  ['same', 'same'],
  ['martha', 'marhta'],
  ['dixon', 'dicksonx'],
  // length-disjoint: no character can fall in the window, and one far longer than the other
  ['ab', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxab'],
  ['a', 'a'.repeat(300)],
  ['abc', 'xyz'],
  // unicode: accents, a surrogate pair, a lone surrogate, code units above 0x7fff
  ['josé', 'jose'],
  ['zoë müller', 'zoe muller'],
  ['a😀b', 'a😀c'],
  ['\ud83d', '\ud83d\ude00'],
  ['\uffff\u8000x', '\u8000\uffffx'],
  // longer than the scratch's first size (64), so it grows between calls
  ['x'.repeat(70) + 'y', 'y' + 'x'.repeat(70)],
  ['a'.repeat(500), 'a'.repeat(499) + 'b'],
];

describe('Jaro-Winkler with stamped flags and copied code units', () => {
  it('equals the plain computation on edge cases, in both orders, repeated', () => {
    for (let round = 0; round < 3; round++)
      for (const [a, b] of EDGE) {
        expect(Object.is(jaro(a, b), jaroOracle(a, b))).toBe(true);
        expect(Object.is(jaro(b, a), jaroOracle(b, a))).toBe(true);
        expect(Object.is(jaroWinkler(a, b), jaroWinklerOracle(a, b))).toBe(true);
      }
  });

  it('equals the plain computation on random strings over small alphabets', () => {
    const random = rng(27);
    const pick = (alphabet: string, max: number): string => {
      const n = Math.floor(random() * max);
      let s = '';
      for (let i = 0; i < n; i++) s += alphabet[Math.floor(random() * alphabet.length)];
      return s;
    };
    let differing = 0;
    for (let k = 0; k < 20_000; k++) {
      const alphabet = k % 3 === 0 ? 'ab' : k % 3 === 1 ? 'abcde.@' : 'aé😀\u8000z';
      const a = pick(alphabet, k % 10 === 0 ? 90 : 24);
      const b = pick(alphabet, k % 7 === 0 ? 90 : 24);
      if (!Object.is(jaroWinkler(a, b), jaroWinklerOracle(a, b))) differing++;
    }
    expect(differing).toBe(0);
  });
});

describe('shared prepared values', () => {
  it('prepareName hands out one value per text, equal to a fresh one', () => {
    const a = prepareName('john smith')!;
    const b = prepareName('john smith')!;
    expect(a).toBe(b);
    expect(prepareName('   ')).toBeNull();
    expect(prepareName('   ')).toBeNull();
  });

  it('nameScore of one shared value is the score of two equal copies', () => {
    const a = prepareName('mary ann o neil')!;
    const copy: NameValue = { ...a, tokens: [...a.tokens], groups: [...a.groups], codes: [...a.codes] };
    expect(nameScore(a, a)).toBe(100);
    expect(nameScore(a, copy)).toBe(100);
    expect(nameScore(copy, a)).toBe(100);
  });

  it('metaphoneScore of one shared codes object is the score of two equal copies', () => {
    const c = doubleMetaphone('smith');
    expect(doubleMetaphone('smith')).toBe(c);
    expect(metaphoneScore(c, c)).toBe(metaphoneScore(c, { ...c }));
    expect(metaphoneScore(c, c)).toBe(100);
  });
});

describe('RecordIds', () => {
  it('keeps a hash per record that equal ids share, through truncation and reuse of slots', () => {
    const ids = new RecordIds();
    const list = Array.from({ length: 3000 }, (_, i) => `id-${i % 1500}`);
    for (const id of list) ids.push(id);
    expect(ids.length).toBe(3000);
    for (let r = 0; r < 3000; r++) expect(ids.hashes[r]).toBe(idHash(list[r]!));
    expect(ids.hashes[7]).toBe(ids.hashes[1507]);
    ids.truncate(10);
    ids.push('other');
    expect(ids.list).toEqual([...list.slice(0, 10), 'other']);
    expect(ids.hashes[10]).toBe(idHash('other'));
    expect(idHash('')).toBe(idHash(''));
    expect(idHash('a')).not.toBe(idHash('b'));
  });
});
