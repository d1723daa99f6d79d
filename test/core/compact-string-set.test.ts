/**
 * The unique-value registry's set (src/core/aggregation/compact-string-set.ts) must answer exactly as
 * a Set of strings would: a unique value is never issued twice. Checked against a Set over random
 * values of every kind: empty, one byte per character, characters above U+00FF (emoji, lone
 * surrogates), prefixes of one another, and enough values to grow and collide.
 */
import { CompactStringSet } from '../../src/core/aggregation/compact-string-set';
import { UniqueRegistry } from '../../src/core/aggregation/unique-registry';

/** A small deterministic generator (the test must fail the same way every time). */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const ALPHABET = [
  'a',
  'b',
  'Z',
  '0',
  '.',
  ' ',
  '\u00e9',
  '\u00ff',
  '\u0000',
  '\u0100',
  '\u4e2d',
  '\ud83d\ude00',
  '\ud800',
];

describe('compact string set', () => {
  it('answers add, has and size as a Set does, over 60,000 random operations', () => {
    const rnd = prng(27);
    const set = new CompactStringSet();
    const ref = new Set<string>();
    const mismatches: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      const length = Math.floor(rnd() * 6);
      let s = '';
      for (let j = 0; j < length; j++) s += ALPHABET[Math.floor(rnd() * (rnd() < 0.9 ? 7 : ALPHABET.length))]!;
      if (rnd() < 0.3) s = `user.${Math.floor(rnd() * 20_000)}`;
      const had = ref.has(s);
      if (set.has(s) !== had) mismatches.push(`has ${JSON.stringify(s)}`);
      if (rnd() < 0.7) {
        ref.add(s);
        if (set.add(s) === had) mismatches.push(`add ${JSON.stringify(s)}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(set.size).toBe(ref.size);
    expect([...ref].every((s) => set.has(s))).toBe(true);
  });

  it('tells apart the empty string, prefixes, and strings that differ only above U+00FF', () => {
    const set = new CompactStringSet();
    expect(set.has('')).toBe(false);
    expect(set.add('')).toBe(true);
    expect(set.add('')).toBe(false);
    expect(set.add('ab')).toBe(true);
    expect(set.has('a')).toBe(false);
    expect(set.has('abc')).toBe(false);
    expect(set.add('a\u0100')).toBe(true);
    expect(set.has('a\u0000')).toBe(false);
    expect(set.has('a\u0100')).toBe(true);
    expect(set.size).toBe(3);
  });

  it('holds 200,000 values through its growth', () => {
    const set = new CompactStringSet();
    for (let i = 0; i < 200_000; i++) set.add(`F${String(i).padStart(7, '0')}`);
    expect(set.size).toBe(200_000);
    let found = 0;
    for (let i = 0; i < 200_000; i++) if (set.has(`F${String(i).padStart(7, '0')}`)) found++;
    expect(found).toBe(200_000);
    expect(set.has('F0200000')).toBe(false);
    expect(set.add('F0199999')).toBe(false);
  });
});

describe('unique registry', () => {
  it('registers values an account holds (arrays: each), skips empty ones, and claims a value once', () => {
    const r = new UniqueRegistry(['login']);
    r.register('login', ['a', 'b', 7]);
    r.register('login', '');
    r.register('login', null);
    r.register('other', 'x');
    expect(r.size('login')).toBe(3);
    expect(r.has('login', '7')).toBe(true);
    expect(r.has('other', 'x')).toBe(false);
    expect(r.claim('login', 'a')).toBe(false);
    expect(r.claim('login', 'c')).toBe(true);
    expect(r.claim('login', 'c')).toBe(false);
    expect(r.claim('new', '中')).toBe(true);
    expect(r.claim('new', '中')).toBe(false);
    expect(r.size('new')).toBe(1);
  });
});
