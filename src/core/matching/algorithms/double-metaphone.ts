import { type Kernel, type KeyFilter } from './kernel';

/*
 * double-metaphone 1.0.5 is the last CommonJS release of wooorm's port (2.x is ESM-only, which
 * jest/swc cannot load); it has no dependencies and does not truncate codes (talisman does).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const encode: (value: string) => [string, string] = require('double-metaphone');

export interface MetaphoneCodes {
  primary: string;
  secondary: string;
}

/**
 * Codes of recent values. Names repeat (a population's common surnames and given names make most
 * of its tokens), and encoding is a long chain of string tests per letter: at 100k identities it
 * was 7 % of a matching run. Bounded: emptied when full, so a worker's memory does not grow with
 * the tenants it served. The codes are shared between the records holding a value, never changed.
 */
const memo = new Map<string, Readonly<MetaphoneCodes>>();
const MEMO_MAX = 65_536;

export function doubleMetaphone(value: string): Readonly<MetaphoneCodes> {
  let codes = memo.get(value);
  if (codes) return codes;
  const [primary, secondary] = encode(value);
  codes = { primary, secondary };
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(value, codes);
  return codes;
}

/**
 * 100 when the primary codes are equal, 80 when only the secondary codes are, 70 when a primary
 * equals the other side's secondary, else 0. Empty codes never match.
 */
export function metaphoneScore(a: MetaphoneCodes, b: MetaphoneCodes): number {
  // One shared codes object (the memo): equal primaries without loading b's.
  if (a === b || a.primary === b.primary) return 100;
  if (a.secondary.length > 0 && a.secondary === b.secondary) return 80;
  if ((b.secondary.length > 0 && a.primary === b.secondary) || (a.secondary.length > 0 && a.secondary === b.primary))
    return 70;
  return 0;
}

export const doubleMetaphoneKernel: Kernel<MetaphoneCodes> = {
  algorithm: 'double-metaphone',
  // A value with no code (digits, punctuation only) is not comparable phonetically.
  prepare: (s) => {
    const c = doubleMetaphone(s);
    return c.primary.length > 0 ? c : null;
  },
  score: metaphoneScore,
  filter: (threshold): KeyFilter<MetaphoneCodes> | { kind: 'all' } => {
    if (threshold <= 0) return { kind: 'all' };
    // Above 80 only equal primaries pass; otherwise some code must be shared.
    if (threshold > 80) return { kind: 'keys', lossless: true, keys: (p, out) => void out.push(p.primary) };
    return {
      kind: 'keys',
      lossless: true,
      keys: (p, out) => {
        out.push(p.primary);
        if (p.secondary.length > 0 && p.secondary !== p.primary) out.push(p.secondary);
      },
    };
  },
};
