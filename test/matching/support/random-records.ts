import type { MatchRecord } from '../../../src/core/matching';

// The benchmark's seeded generator (mulberry32), so property tests and bench data share one PRNG.
import { rng } from '../../../bench/matching-data';
export { rng };

export type Rand = () => number;
const pick = <T>(rand: Rand, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
const int = (rand: Rand, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));

const ALPHABET = 'aabcdeeehiklmnoorsstu';
const EXOTIC = ['é', 'ñ', 'ü', 'ß', 'ø', '中', '文', '😀', 'Å', ' ', '-', '.', '@'];
const SYLLABLES = ['an', 'ber', 'ka', 'lo', 'mi', 'son', 'th', 'el', 'ri', 'sch', 'ph', 'o', 'y'];

function baseString(rand: Rand): string {
  const kind = rand();
  if (kind < 0.08) return pick(rand, ['', ' ', '  ']); // empty after normalisation
  if (kind < 0.2) return 'abcdefghiklmnostu'[int(rand, 0, 16)]!.repeat(int(rand, 1, 3)); // very short
  if (kind < 0.28) return pick(rand, ['a', 'e', 'o', 's']).repeat(int(rand, 2, 12)); // repeated chars
  if (kind < 0.33) {
    let s = '';
    const n = int(rand, 60, 220); // very long
    for (let i = 0; i < n; i++) s += ALPHABET[int(rand, 0, ALPHABET.length - 1)];
    return s;
  }
  if (kind < 0.6) {
    const words = int(rand, 1, 3);
    const out: string[] = [];
    for (let w = 0; w < words; w++) {
      let s = '';
      for (let i = int(rand, 1, 3); i > 0; i--) s += pick(rand, SYLLABLES);
      out.push(s);
    }
    return out.join(' ');
  }
  let s = '';
  const n = int(rand, 2, 14);
  for (let i = 0; i < n; i++) s += rand() < 0.08 ? pick(rand, EXOTIC) : ALPHABET[int(rand, 0, ALPHABET.length - 1)];
  return s;
}

/** A few random edits: substitutions, insertions, deletions, transpositions, case, accents, token swap. */
function mutate(rand: Rand, s: string): string {
  let out = s;
  for (let e = int(rand, 0, 3); e > 0; e--) {
    const i = int(rand, 0, Math.max(0, out.length - 1));
    const op = int(rand, 0, 6);
    const c = rand() < 0.1 ? pick(rand, EXOTIC) : ALPHABET[int(rand, 0, ALPHABET.length - 1)]!;
    if (op === 0) out = out.slice(0, i) + c + out.slice(i + 1);
    else if (op === 1) out = out.slice(0, i) + c + out.slice(i);
    else if (op === 2) out = out.slice(0, i) + out.slice(i + 1);
    else if (op === 3 && i + 1 < out.length) out = out.slice(0, i) + out[i + 1] + out[i] + out.slice(i + 2);
    else if (op === 4) out = out.toUpperCase();
    else if (op === 5) out = out.replace(/e/, 'é').replace(/n/, 'ñ');
    else out = out.split(' ').reverse().join(' ');
  }
  return out;
}

/** Values for one attribute: fresh strings, copies and mutations of earlier values, arrays, gaps. */
function randomValues(rand: Rand, count: number): unknown[] {
  const values: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const r = rand();
    let v: unknown;
    if (i > 0 && r < 0.15)
      v = values[int(rand, 0, i - 1)]; // identical
    else if (i > 0 && r < 0.55) {
      const src = values[int(rand, 0, i - 1)];
      v = typeof src === 'string' ? mutate(rand, src) : baseString(rand);
    } else if (r < 0.6) v = undefined;
    else if (r < 0.65)
      v = [
        baseString(rand),
        i > 0 && typeof values[i - 1] === 'string' ? mutate(rand, values[i - 1] as string) : baseString(rand),
      ];
    else v = baseString(rand);
    values.push(v);
  }
  return values;
}

/** Records whose attributes are independent random value streams. */
export function randomRecords(seed: number, count: number, attributes: string[], prefix: string): MatchRecord[] {
  const rand = rng(seed);
  const columns = attributes.map(() => randomValues(rand, count));
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${i}`,
    attributes: Object.fromEntries(attributes.map((a, k) => [a, columns[k]![i]])),
  }));
}
