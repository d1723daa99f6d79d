import { type Kernel, type OverlapFilter, minRaw, toScore } from './kernel';

/** Flags reused across calls: no allocation per pair. */
let flagsA = new Uint8Array(64);
let flagsB = new Uint8Array(64);

function ensure(n: number): void {
  if (flagsA.length < n) {
    flagsA = new Uint8Array(n * 2);
    flagsB = new Uint8Array(n * 2);
  }
}

/** Jaro similarity 0..1 (match window max(len)/2 - 1, half transpositions). */
export function jaro(a: string, b: string): number {
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  if (a === b) return 1;
  ensure(la > lb ? la : lb);
  flagsA.fill(0, 0, la);
  flagsB.fill(0, 0, lb);
  const window = Math.max(0, ((la > lb ? la : lb) >> 1) - 1);
  let m = 0;
  for (let i = 0; i < la; i++) {
    const c = a.charCodeAt(i);
    const lo = i - window > 0 ? i - window : 0;
    const hi = i + window + 1 < lb ? i + window + 1 : lb;
    for (let j = lo; j < hi; j++) {
      if (flagsB[j] === 0 && b.charCodeAt(j) === c) {
        flagsA[i] = 1;
        flagsB[j] = 1;
        m++;
        break;
      }
    }
  }
  if (m === 0) return 0;
  let t = 0;
  let k = 0;
  for (let i = 0; i < la; i++) {
    if (flagsA[i] === 0) continue;
    while (flagsB[k] === 0) k++;
    if (a.charCodeAt(i) !== b.charCodeAt(k)) t++;
    k++;
  }
  return (m / la + m / lb + (m - t / 2) / m) / 3;
}

/** Jaro-Winkler 0..1: prefix scale 0.1, common prefix up to 4, boost only when Jaro >= 0.7. */
export function jaroWinkler(a: string, b: string): number {
  const j = jaro(a, b);
  if (j < 0.7) return j;
  const max = Math.min(4, a.length, b.length);
  let l = 0;
  while (l < max && a.charCodeAt(l) === b.charCodeAt(l)) l++;
  return j + l * 0.1 * (1 - j);
}

/**
 * Lossless filter (derivation in docs/matching.md): JW <= 0.6*Jaro + 0.4, so a pass needs
 * Jaro >= Jmin = (t - 0.4)/0.6. Jaro <= (2 + min/max)/3 gives the length-ratio filter, and
 * Jaro <= (c/m + c/n + 1)/3 with c = shared characters (multiset) gives c >= (3*Jmin - 1)*m*n/(m+n).
 */
export function jaroWinklerOverlapFilter(threshold: number): OverlapFilter<string> {
  const t = minRaw(threshold);
  const jmin = (t - 0.4) / 0.6;
  const lengthOk = (m: number, n: number): boolean => {
    const lo = m < n ? m : n;
    const hi = m < n ? n : m;
    return 0.6 * ((2 + lo / hi) / 3) + 0.4 >= t;
  };
  return {
    kind: 'overlap',
    size: (p) => p.length,
    tokenKeys: (p, out) => {
      for (let i = 0; i < p.length; i++) out.push(p.charCodeAt(i));
    },
    lengthOk,
    minOverlap: (m, n) => ((3 * jmin - 1) * m * n) / (m + n),
    partnerRange: (m) => {
      // ratio r = min/max must satisfy 0.6*(2+r)/3 + 0.4 >= t  <=>  r >= 5t - 4
      const r = 5 * t - 4;
      if (r <= 0) return [1, Number.MAX_SAFE_INTEGER];
      return [Math.max(1, Math.floor(m * r)), Math.ceil(m / r)];
    },
  };
}

export const jaroWinklerKernel: Kernel<string> = {
  algorithm: 'jaro-winkler',
  prepare: (s) => s,
  score: (a, b) => toScore(jaroWinkler(a, b)),
  filter: (threshold) => (threshold <= 0 ? { kind: 'all' } : jaroWinklerOverlapFilter(threshold)),
};
