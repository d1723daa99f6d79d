import { OverlapIndex } from '../indexes/overlap-index';
import { UnionIndex } from '../indexes/union-index';
import { type Kernel, type OverlapFilter, minRaw, toScore } from './kernel';

// Read once: in a vm context (jest) a global read in a hot loop can stay a slow lookup for the rest of the
// process (blocking measured 4x slower there); a module constant costs nothing in plain node.
const { max, min } = Math;

/**
 * Scratch reused across calls, no allocation per pair. The match flags are stamps: a position is
 * flagged in this call when it holds the call's stamp, so nothing is cleared per call. With b's code
 * units in a typed array, a pair of bench:matching's e-mails took 0.94 µs instead of 2.1 µs.
 */
let flagsA = new Int32Array(64);
let flagsB = new Int32Array(64);
/** b's code units, read once per call: the match loop reads each up to 2 x window times. */
let codesB = new Uint16Array(64);
let stamp = 0;

/** A stamp no position holds yet, the flags sized for strings of n characters. */
function nextStamp(n: number): number {
  if (flagsA.length < n) {
    flagsA = new Int32Array(n * 2);
    flagsB = new Int32Array(n * 2);
    codesB = new Uint16Array(n * 2);
    stamp = 0;
  }
  if (stamp === 0x7fffffff) {
    flagsA.fill(0);
    flagsB.fill(0);
    stamp = 0;
  }
  return ++stamp;
}

/** Jaro similarity 0..1 (match window max(len)/2 - 1, half transpositions). */
export function jaro(a: string, b: string): number {
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return 0;
  if (a === b) return 1;
  const cur = nextStamp(la > lb ? la : lb);
  const fa = flagsA;
  const fb = flagsB;
  const cb = codesB;
  for (let j = 0; j < lb; j++) cb[j] = b.charCodeAt(j);
  const window = max(0, ((la > lb ? la : lb) >> 1) - 1);
  let m = 0;
  for (let i = 0; i < la; i++) {
    const c = a.charCodeAt(i);
    const lo = i - window > 0 ? i - window : 0;
    const hi = i + window + 1 < lb ? i + window + 1 : lb;
    for (let j = lo; j < hi; j++) {
      if (cb[j] === c && fb[j] !== cur) {
        fa[i] = cur;
        fb[j] = cur;
        m++;
        break;
      }
    }
  }
  if (m === 0) return 0;
  let t = 0;
  let k = 0;
  for (let i = 0; i < la; i++) {
    if (fa[i] !== cur) continue;
    while (fb[k] !== cur) k++;
    if (a.charCodeAt(i) !== cb[k]) t++;
    k++;
  }
  return (m / la + m / lb + (m - t / 2) / m) / 3;
}

/** Jaro-Winkler 0..1: prefix scale 0.1, common prefix up to 4, boost only when Jaro >= 0.7. */
export function jaroWinkler(a: string, b: string): number {
  const j = jaro(a, b);
  if (j < 0.7) return j;
  const prefixEnd = min(4, a.length, b.length);
  let l = 0;
  while (l < prefixEnd && a.charCodeAt(l) === b.charCodeAt(l)) l++;
  return j + l * 0.1 * (1 - j);
}

/**
 * Lossless filter (derivation in docs/matching.md): JW <= 0.6*Jaro + 0.4, so a pass needs
 * Jaro >= Jmin = (t - 0.4)/0.6. Jaro <= (2 + min/max)/3 gives the length-ratio filter, and
 * Jaro <= (c/m + c/n + 1)/3 with c = shared characters (multiset) gives c >= (3*Jmin - 1)*m*n/(m+n).
 */
export function jaroWinklerOverlapFilter(threshold: number): OverlapFilter<string> {
  return jaroFilter((minRaw(threshold) - 0.4) / 0.6, 0);
}

/**
 * Common-prefix lengths of the prefix cases (jaroWinklerPrefixCase): case k holds the pairs whose
 * common prefix (at most 4 characters, as Winkler's boost counts it) is k long, the last case those
 * with 4 or more.
 */
export const PREFIX_CASES = [0, 1, 2, 3, 4] as const;

/**
 * The filter of one prefix case: pairs whose first k characters agree and whose Winkler prefix is
 * exactly k (at least 4 for k = 4). Such a pair has JW <= Jaro + 0.1k(1 - Jaro) (the boost is
 * l*0.1*(1 - Jaro) with l = k, or none below Jaro 0.7), so a pass needs
 * Jaro >= (t - 0.1k)/(1 - 0.1k): for k = 0 Jaro >= t itself. Its tokens are the characters
 * keyed by the first k characters (hashed: a collision merges two keys, which only adds
 * candidates), so the pair's shared tokens are its shared characters, and a value only meets
 * the values of its own k-character prefix. Every pair is in exactly one case (its own prefix
 * length), so the cases together lose no pair.
 */
export function jaroWinklerPrefixCase(threshold: number, k: number): OverlapFilter<string> {
  const t = minRaw(threshold);
  return jaroFilter(k === 0 ? t : (t - 0.1 * k) / (1 - 0.1 * k), k, k <= GROUP_CASES_UP_TO);
}

/**
 * Prefix cases up to this one use group tokens: without a shared prefix (or with one character)
 * the character tokens' postings hold a large share of the values (measured on bench:matching's
 * e-mails: 16,259 postings per probe for case 0 with characters, 5,749 with 8 groups); with a
 * longer key the characters are already selective and verify tighter.
 */
const GROUP_CASES_UP_TO = 1;
/** Character groups of the group tokens (jaroFilter with groups). */
const GROUPS = 8;
const LOW29 = 0x1fffffff;

/**
 * Length, shared-character and length-ratio bounds of Jaro >= jmin, on tokens keyed by the
 * first k characters. Jaro <= (c/m + c/n + 1)/3 with c shared characters (multiset), so a pass
 * needs c >= o(m, n) = (3*jmin - 1)*m*n/(m+n).
 *
 * Characters as tokens (groups = false): the pair shares >= o of them. Over a small alphabet
 * every character is common, so the rarest few are still in a large share of the values. Group
 * tokens (groups = true): the characters fall into GROUPS fixed groups (by code), and a value's
 * token per group is its sub-multiset of that group (hashed). The multisets of a passing pair
 * differ in at most d = m + n - 2*ceil(o) characters (each character not shared is one element of
 * the symmetric difference), and a group whose sub-multisets differ holds one of them, so at
 * least GROUPS - d group tokens are equal. A hash collision makes two tokens equal: only more
 * candidates.
 */
function jaroFilter(jmin: number, k: number, groups = false): OverlapFilter<string> {
  const lengthOk = (m: number, n: number): boolean => {
    const lo = m < n ? m : n;
    const hi = m < n ? n : m;
    return (2 + lo / hi) / 3 >= jmin;
  };
  const shared = (m: number, n: number): number => ((3 * jmin - 1) * m * n) / (m + n);
  const sub = new Int32Array(GROUPS);
  return {
    kind: 'overlap',
    size: (p) => p.length,
    tokenKeys: (p, out) => {
      if (p.length < k) return; // no partner shares a k-character prefix
      let key = 0;
      for (let i = 0; i < k; i++) key = (Math.imul(key, 31) + p.charCodeAt(i) + 1) & 0x1ffff;
      if (!groups) {
        // 17 bits of prefix hash and 16 of character: keys stay below 2^33 (OverlapIndex numbers occurrences above)
        const base = key * 65536;
        for (let i = 0; i < p.length; i++) out.push(base + p.charCodeAt(i));
        return;
      }
      // per group an order-free hash of its characters (a sum), mixed with the prefix key; group in the top bits
      const seed = Math.imul(key + 1, 0x2545f491);
      sub.fill(seed);
      for (let i = 0; i < p.length; i++) {
        const c = p.charCodeAt(i);
        sub[c % GROUPS] = (sub[c % GROUPS]! + Math.imul(c + 1, 0x9e3779b1)) | 0;
      }
      for (let g = 0; g < GROUPS; g++) out.push(g * (LOW29 + 1) + (sub[g]! & LOW29));
    },
    lengthOk,
    minOverlap: groups ? (m, n) => GROUPS - (m + n - 2 * Math.ceil(shared(m, n) - 1e-9)) : shared,
    partnerRange: (m) => {
      // ratio r = min/max must satisfy (2 + r)/3 >= jmin  <=>  r >= 3*jmin - 2
      const r = 3 * jmin - 2;
      if (r <= 0) return [1, Number.MAX_SAFE_INTEGER];
      return [Math.max(1, Math.floor(m * r)), Math.ceil(m / r)];
    },
  };
}

/**
 * From this threshold on the prefix cases are used: each case's index is far more selective (a
 * k-character prefix, or for k = 0 the bound Jaro >= t), which pays for probing five indexes.
 * Below it the cases' bounds get too weak to filter (Jaro >= (t - 0.4)/0.6 reaches 1/3 at t = 0.6).
 */
const PREFIX_CASES_FROM = 85;

export const jaroWinklerKernel: Kernel<string> = {
  algorithm: 'jaro-winkler',
  prepare: (s) => s,
  score: (a, b) => toScore(jaroWinkler(a, b)),
  filter: (threshold) => {
    if (threshold <= 0) return { kind: 'all' };
    if (threshold < PREFIX_CASES_FROM) return jaroWinklerOverlapFilter(threshold);
    return {
      kind: 'custom',
      build: (values) =>
        new UnionIndex(PREFIX_CASES.map((k) => new OverlapIndex(jaroWinklerPrefixCase(threshold, k), values))),
    };
  },
};
