import { jaro, jaroWinkler } from '../../src/core/matching/algorithms/jaro-winkler';
import { doubleMetaphone, metaphoneScore } from '../../src/core/matching/algorithms/double-metaphone';
import { nameScore, prepareName } from '../../src/core/matching/algorithms/name-similarity';
import { scoreValues } from '../../src/core/matching';
import { normalizeText, attributeValues, nameTokens } from '../../src/core/matching/normalize';
import { nicknamePairCount } from '../../src/core/matching/nicknames';

const name = (s: string) => prepareName(normalizeText(s))!;

describe('normalisation', () => {
  it('lower-cases, strips diacritics, folds, trims and collapses spaces', () => {
    expect(normalizeText('  José   ÅSTRÖM ')).toBe('jose astrom');
    expect(normalizeText('Straße Øre Łukasz')).toBe('strasse ore lukasz');
  });
  it('plain ASCII words take a shortcut with the same answers as the full steps, edges included', () => {
    // The full steps, written out: what normalizeText answered for every string before its shortcut.
    const fold: Record<string, string> = { ß: 'ss', ø: 'o', æ: 'ae', œ: 'oe', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' };
    const full = (v: string): string =>
      v
        .normalize('NFD')
        .replace(/\p{M}+/gu, '')
        .toLowerCase()
        .replace(/[ßøæœłđðþı]/g, (c) => fold[c] ?? c)
        .replace(/\s+/g, ' ')
        .trim();
    // Near the shortcut's edge: spaces doubled or at either end, tabs and other white space, control
    // and non-ASCII characters (marks, folded letters, a non-breaking space, the Kelvin sign).
    const parts = ['A', 'z', 'Q', '0', '.', '-', "'", '~', '@', ' ', ' ', '\t', '\n', '\x7f', '\x00'];
    const rare = ['é', 'Ø', 'ß', '\u00a0', '\u212a', 'e\u0301', 'İ', 'Σ'];
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    // The shortcut's condition, spelled without its pattern: printable ASCII and single inner spaces.
    const isPlain = (v: string): boolean =>
      [...v].every((c) => c >= ' ' && c <= '~') && !v.startsWith(' ') && !v.endsWith(' ') && !v.includes('  ');
    let plain = 0;
    for (let i = 0; i < 20_000; i++) {
      let v = '';
      for (let len = 1 + next(12); len > 0; len--)
        v += next(10) === 0 ? rare[next(rare.length)] : parts[next(parts.length)];
      if (isPlain(v)) plain++;
      expect([v, normalizeText(v)]).toEqual([v, full(v)]);
    }
    // Both sides of the edge were exercised.
    expect(plain).toBeGreaterThan(1_000);
    expect(plain).toBeLessThan(19_000);
  });
  it('reads scalars and arrays; empty and non-scalar values are missing', () => {
    expect(attributeValues(' A ')).toEqual(['a']);
    expect(attributeValues(['x', 'X ', '', null, 3])).toEqual(['x', '3']);
    expect(attributeValues('   ')).toEqual([]);
    expect(attributeValues({ a: 1 })).toEqual([]);
    expect(attributeValues(undefined)).toEqual([]);
  });
  it('name tokens: every run of non-alphanumeric characters separates, none is empty', () => {
    expect(nameTokens("ann-marie o'neil")).toEqual(['ann', 'marie', 'o', 'neil']);
    expect(nameTokens('--a..b--')).toEqual(['a', 'b']);
    expect(nameTokens(' a')).toEqual(['a']);
    expect(nameTokens('a ')).toEqual(['a']);
    expect(nameTokens('élodie 2')).toEqual(['élodie', '2']);
    expect(nameTokens('---')).toEqual([]);
    expect(nameTokens('')).toEqual([]);
  });
});

describe('Levenshtein: 100 * (1 - d / max length)', () => {
  it('scores known pairs', () => {
    expect(scoreValues('levenshtein', 'kitten', 'sitting')).toBe(57.1); // d = 3, max 7
    expect(scoreValues('levenshtein', 'stephen smith', 'steven smyth')).toBe(76.9); // d = 3, max 13
    expect(scoreValues('levenshtein', 'ABC', 'abc')).toBe(100);
    expect(scoreValues('levenshtein', 'abc', 'xyz')).toBe(0);
    expect(scoreValues('levenshtein', '', 'abc')).toBeNull();
  });
});

describe('Jaro-Winkler', () => {
  it('matches the textbook values', () => {
    expect(jaro('martha', 'marhta')).toBeCloseTo(0.9444, 4);
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.9611, 4);
    expect(scoreValues('jaro-winkler', 'MARTHA', 'marhta')).toBe(96.1);
    expect(jaroWinkler('dwayne', 'duane')).toBeCloseTo(0.84, 2);
    expect(jaroWinkler('dixon', 'dicksonx')).toBeCloseTo(0.813, 3);
    expect(scoreValues('jaro-winkler', 'stephen smith', 'steven smyth')).toBe(90.7);
  });
  it('is 0 without common characters and 100 for equal strings', () => {
    expect(jaroWinkler('abc', 'xyz')).toBe(0);
    expect(jaroWinkler('same', 'same')).toBe(1);
  });
  it('does not allocate a result that depends on an earlier longer call', () => {
    jaroWinkler('a'.repeat(500), 'a'.repeat(499) + 'b');
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.9611, 4);
  });
});

describe('Dice on bigram multisets', () => {
  it('scores known pairs', () => {
    expect(scoreValues('dice', 'night', 'nacht')).toBe(25); // ni ig gh ht / na ac ch ht -> 2*1/8
    expect(scoreValues('dice', 'stephen smith', 'steven smyth')).toBe(60.9); // 7 shared of 12 + 11 bigrams
    expect(scoreValues('dice', 'aaaa', 'aa')).toBe(50); // {aa,aa,aa} vs {aa}: multiset, not set
    expect(scoreValues('dice', 'a', 'a')).toBe(100);
    expect(scoreValues('dice', 'a', 'b')).toBe(0);
  });
});

describe('Double Metaphone', () => {
  it('encodes classic examples', () => {
    expect(doubleMetaphone('smith')).toEqual({ primary: 'SM0', secondary: 'XMT' });
    expect(doubleMetaphone('schmidt')).toEqual({ primary: 'XMT', secondary: 'SMT' });
    expect(doubleMetaphone('thompson')).toEqual({ primary: 'TMPSN', secondary: 'TMPSN' }); // TH -> T
    expect(doubleMetaphone('stephen').primary).toBe(doubleMetaphone('steven').primary);
  });
  it('remembers recent values (one shared code object) and stays right once its memo is emptied', () => {
    expect(doubleMetaphone('oyelaran')).toBe(doubleMetaphone('oyelaran'));
    const before = doubleMetaphone('kowalczyk');
    // More distinct values than the memo holds: it is emptied along the way.
    for (let i = 0; i < 70_000; i++) doubleMetaphone(`x${i.toString(36)}`);
    const after = doubleMetaphone('kowalczyk');
    expect(after).toEqual(before);
    expect(after).toEqual({ primary: 'KLSK', secondary: 'KLXK' });
  });
  it('scores 100 / 80 / 70 / 0', () => {
    expect(scoreValues('double-metaphone', 'Smith', 'Smyth')).toBe(100);
    expect(metaphoneScore({ primary: 'A', secondary: 'X' }, { primary: 'B', secondary: 'X' })).toBe(80);
    expect(scoreValues('double-metaphone', 'Smith', 'Schmidt')).toBe(70); // XMT = secondary of smith
    expect(scoreValues('double-metaphone', 'Smith', 'Jones')).toBe(0);
    expect(scoreValues('double-metaphone', '1234', '1234')).toBeNull(); // no code: not comparable
  });
});

describe('exact', () => {
  it('compares normalised values', () => {
    expect(scoreValues('exact', ' John@Example.com', 'john@example.com')).toBe(100);
    expect(scoreValues('exact', 'a', 'b')).toBe(0);
  });
});

describe('name matcher', () => {
  it('is order-insensitive and diacritic-insensitive', () => {
    expect(nameScore(name('Smith, John'), name('john smith'))).toBe(100);
    expect(nameScore(name('José Núñez'), name('Jose Nunez'))).toBe(100);
  });
  it('knows nicknames, initials and sound-alikes', () => {
    expect(nameScore(name('Bob Smith'), name('Robert Smith'))).toBe(95);
    expect(nameScore(name('J. Smith'), name('John Smith'))).toBe(90);
    expect(nameScore(name('stephen smith'), name('steven smyth'))).toBe(90);
    expect(nameScore(name('Bill Gates'), name('William Gates'))).toBe(95);
  });
  it('penalises an extra middle name less than a wrong name', () => {
    const middle = nameScore(name('John Smith'), name('John Michael Smith'));
    const wrong = nameScore(name('John Smith'), name('Peter Smith'));
    expect(middle).toBe(80);
    expect(wrong).toBe(50);
  });
  it('has a modest nickname table', () => {
    expect(nicknamePairCount()).toBeGreaterThanOrEqual(100);
  });
});
