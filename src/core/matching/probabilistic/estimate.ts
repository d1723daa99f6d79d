/**
 * Unsupervised estimation of the Fellegi-Sunter parameters: u from random pairs, m and the prior by
 * EM over the blocked candidate pairs. The E-step assumes an account has at most one true match
 * among the records before it, so namesakes sharing the same evidence split one unit of belief
 * instead of each counting as a match (the textbook per-pair E-step inflates the prior on blocked
 * pairs of people who share names, and with it m of the name levels).
 */

import { drain, type Steps, ticker } from '../steps';

/** Per attribute: level counts, or level probabilities; index = level. */
export type LevelTable = number[][];

/** Deterministic so the index matcher and the oracle estimate the same parameters. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0 || 1;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** u per level from level counts of random pairs, Laplace-smoothed so no level has u = 0. */
export function uFromCounts(counts: LevelTable): LevelTable {
  return counts.map((row) => {
    const total = row.reduce((s, c) => s + c, 0);
    return row.map((c) => (c + 1) / (total + row.length));
  });
}

export interface CandidatePairs {
  /** Number of attributes. */
  attributes: number;
  /** levels[p * attributes + i]: level of pair p on attribute i, -1 missing. */
  levels: Int8Array;
  /** Pairs of account k: [start[k], start[k + 1]). */
  start: number[];
  /** Records before each account (the prior is spread over them). */
  before: number[];
}

export interface EmEstimate {
  m: LevelTable;
  /** Share of accounts with a true match among the records before them. */
  prior: number;
  iterations: number;
}

function logRatio(m: LevelTable, u: LevelTable, neutral: ReadonlySet<number>[]): LevelTable {
  return m.map((row, i) => row.map((mi, l) => (neutral[i]!.has(l) ? 0 : Math.log2(mi / u[i]![l]!))));
}

/**
 * Strength of the prior on each attribute's m, in pseudo-matches spread like u (no evidence): enough
 * to keep an attribute few matches show from extreme values, nothing against thousands of matches.
 */
const M_PRIOR_STRENGTH = 4;

/** Accounts or pairs between two yields: a few milliseconds of work. */
const STEP = 8192;

/**
 * EM for m and the prior with u fixed. Each account's candidates compete for one unit of
 * probability against "no match among the records before it" (weight 1 - prior) and against the
 * non-candidates (assumed to disagree on every attribute: weight `floor` each). Nothing is capped: m
 * of every level (an employee number that differs, a department that changed) is what the data says,
 * smoothed by a weak Dirichlet prior centred on u (no evidence), except the levels whose m is assumed;
 * the prior is a Beta(1, 1)-smoothed share of accounts with a match.
 */
export function estimateM(
  pairs: CandidatePairs,
  u: LevelTable,
  neutral: ReadonlySet<number>[],
  assumed: ReadonlyArray<ReadonlyMap<number, number> | undefined> = [],
  maxIterations = 60,
): EmEstimate {
  return drain(estimateMSteps(pairs, u, neutral, assumed, maxIterations));
}

/** estimateM in steps (steps.ts): a yield every few thousand accounts or pairs. */
export function* estimateMSteps(
  pairs: CandidatePairs,
  u: LevelTable,
  neutral: ReadonlySet<number>[],
  assumed: ReadonlyArray<ReadonlyMap<number, number> | undefined> = [],
  maxIterations = 60,
): Steps<EmEstimate> {
  const tick = ticker(STEP);
  const A = pairs.attributes;
  const start: LevelTable = u.map((row) => {
    const k = row.length;
    // Start: agreement likely for matches, the last level (disagreement) unlikely.
    const raw = row.map((_, l) => (l === k - 1 ? 0.05 : 2 ** (k - 1 - l)));
    const s = raw.reduce((x, y) => x + y, 0);
    return raw.map((r) => r / s);
  });
  const fix = (row: number[], i: number): number[] => {
    const a = assumed[i];
    if (!a || a.size === 0) return row;
    let fixed = 0;
    let rest = 0;
    row.forEach((v, l) => (a.has(l) ? (fixed += a.get(l)!) : (rest += v)));
    return row.map((v, l) => (a.has(l) ? a.get(l)! : rest > 0 ? (v * (1 - fixed)) / rest : v));
  };
  let m: LevelTable = start.map(fix);
  let prior = 0.3;
  const accounts = pairs.start.length - 1;
  // Pairs collapse to their level patterns (few hundred): weights and sums per pattern, not per pair.
  const patternOf = new Map<number, number>();
  const patterns: number[][] = [];
  const pairPattern = new Int32Array(pairs.levels.length / Math.max(A, 1));
  for (let p = 0; p < pairPattern.length; p++) {
    let key = 0;
    for (let i = 0; i < A; i++) key = key * 16 + (pairs.levels[p * A + i]! + 1);
    let id = patternOf.get(key);
    if (id === undefined) {
      id = patterns.length;
      patternOf.set(key, id);
      patterns.push(Array.from(pairs.levels.subarray(p * A, p * A + A)));
    }
    pairPattern[p] = id;
    if (tick()) yield;
  }
  const patternWeight = new Float64Array(patterns.length);
  const patternPost = new Float64Array(patterns.length);
  let it = 0;
  let w = new Float64Array(64);
  for (; it < maxIterations; it++) {
    const weights = logRatio(m, u, neutral);
    const floor = 2 ** weights.reduce((s, row) => s + row[row.length - 1]!, 0);
    patterns.forEach((levels, id) => {
      let sum = 0;
      levels.forEach((l, i) => {
        if (l >= 0) sum += weights[i]![l]!;
      });
      patternWeight[id] = 2 ** Math.min(sum, 1000);
    });
    patternPost.fill(0);
    let matches = 0;
    for (let k = 0; k < accounts; k++) {
      const s0 = pairs.start[k]!;
      const s1 = pairs.start[k + 1]!;
      const K = s1 - s0;
      if (K === 0) continue;
      const n = pairs.before[k]!;
      const lambda = prior / Math.max(n, 1);
      let denom = 1 - prior + lambda * Math.max(n - K, 0) * floor;
      if (K > w.length) w = new Float64Array(K * 2);
      for (let p = s0; p < s1; p++) {
        const L = lambda * patternWeight[pairPattern[p]!]!;
        w[p - s0] = L;
        denom += L;
      }
      for (let p = s0; p < s1; p++) {
        const post = w[p - s0]! / denom;
        matches += post;
        patternPost[pairPattern[p]!]! += post;
      }
      if (tick()) yield;
    }
    const acc: LevelTable = m.map((row) => row.map(() => 0));
    patterns.forEach((levels, id) => {
      const post = patternPost[id]!;
      if (post > 0) levels.forEach((l, i) => l >= 0 && (acc[i]![l]! += post));
    });
    const next = acc.map((row, i) => {
      const total = row.reduce((s, c) => s + c, 0);
      // The prior is "no evidence" (m = u): an attribute weighs only what the matches show.
      return fix(
        row.map((c, l) => (c + M_PRIOR_STRENGTH * u[i]![l]!) / (total + M_PRIOR_STRENGTH)),
        i,
      );
    });
    const nextPrior = (matches + 1) / (Math.max(accounts, 0) + 2);
    let delta = Math.abs(nextPrior - prior);
    next.forEach((row, i) => row.forEach((v, l) => (delta = Math.max(delta, Math.abs(v - m[i]![l]!)))));
    m = next;
    prior = nextPrior;
    if (delta < 1e-5) {
      it++;
      break;
    }
  }
  return { m, prior, iterations: it };
}

/**
 * u less the true pairs' expected part of the random pairs (share f, levels distributed as m), at
 * least what one random pair in `draws` would give.
 */
export function withoutMatches(u: LevelTable, m: LevelTable, f: number, draws: number): LevelTable {
  const floor = 1 / Math.max(draws, 1);
  return u.map((row, i) => row.map((v, l) => Math.max((v - f * m[i]![l]!) / (1 - f), Math.min(v, floor))));
}

/** Share of pairs of different records holding the same value (counts: the records holding each value). */
export function chanceAgreement(counts: Iterable<number>): number {
  let n = 0;
  let sq = 0;
  for (const c of counts) {
    n += c;
    sq += c * c;
  }
  return n > 1 ? (sq - n) / (n * (n - 1)) : 0;
}
