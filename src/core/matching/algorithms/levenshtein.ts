import { distance } from 'fastest-levenshtein';
import { type Kernel, type OverlapFilter, minRaw, toScore } from './kernel';

/** 100 * (1 - d / max(|a|, |b|)), d = Levenshtein distance over UTF-16 code units (Myers bit-parallel). */
function levenshteinScore(a: string, b: string): number {
  if (a === b) return 100;
  const max = a.length > b.length ? a.length : b.length;
  return toScore(1 - distance(a, b) / max);
}

/**
 * Length + q-gram count filter (Gravano et al., unpadded form): with k = floor(L*(1-t)) edits
 * allowed for L = max(m, n), a pair needs |m - n| <= k and at least L - q + 1 - k*q shared q-grams.
 * q = 2 from threshold 70 up; below that q = 1 (character counts) so the bound never vanishes.
 */
export function levenshteinOverlapFilter(threshold: number): OverlapFilter<string> {
  const t = minRaw(threshold);
  const q = threshold >= 70 ? 2 : 1;
  const k = (len: number): number => Math.floor(len * (1 - t));
  return {
    kind: 'overlap',
    size: (p) => p.length,
    tokenKeys:
      q === 2
        ? (p, out) => {
            for (let i = 0; i + 1 < p.length; i++) out.push(p.charCodeAt(i) * 65536 + p.charCodeAt(i + 1));
          }
        : (p, out) => {
            for (let i = 0; i < p.length; i++) out.push(p.charCodeAt(i));
          },
    lengthOk: (m, n) => Math.abs(m - n) <= k(m > n ? m : n),
    minOverlap: (m, n) => {
      const len = m > n ? m : n;
      return len - q + 1 - k(len) * q;
    },
    partnerRange: (m) => (t <= 0 ? [1, Number.MAX_SAFE_INTEGER] : [Math.max(1, m - k(m)), Math.ceil(m / t)]),
  };
}

export const levenshteinKernel: Kernel<string> = {
  algorithm: 'levenshtein',
  prepare: (s) => s,
  score: levenshteinScore,
  filter: (threshold) => (threshold <= 0 ? { kind: 'all' } : levenshteinOverlapFilter(threshold)),
};
