/**
 * Unsupervised estimation of the Fellegi-Sunter parameters: u from random pairs, m and the prior by
 * EM over the blocked candidate pairs. The E-step assumes an account has at most one true match
 * among the records before it, so namesakes sharing the same evidence split one unit of belief
 * instead of each counting as a match (the textbook per-pair E-step inflates the prior on blocked
 * pairs of people who share names, and with it m of the name levels).
 */

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
 * EM for m and the prior with u fixed. Each account's candidates compete for one unit of
 * probability against "no match among the records before it" (weight 1 - prior) and against the
 * non-candidates (assumed to disagree on every attribute: weight `floor` each).
 */
/** Highest m of a level meaning "a different identifier" (see Comparator.identifierMismatch). */
export const IDENTIFIER_MISMATCH_MAX_M = 0.05;

export function estimateM(
  pairs: CandidatePairs,
  u: LevelTable,
  neutral: ReadonlySet<number>[],
  capped: ReadonlySet<number>[] = [],
  maxIterations = 40,
): EmEstimate {
  const A = pairs.attributes;
  let m: LevelTable = u.map((row) => {
    const k = row.length;
    // Start: agreement likely for matches, the last level (disagreement) unlikely.
    const raw = row.map((_, l) => (l === k - 1 ? 0.05 : 2 ** (k - 1 - l)));
    const s = raw.reduce((x, y) => x + y, 0);
    return raw.map((r) => r / s);
  });
  let prior = 0.3;
  const accounts = pairs.start.length - 1;
  let it = 0;
  const w = new Float64Array(64);
  for (; it < maxIterations; it++) {
    const weights = logRatio(m, u, neutral);
    const floor = 2 ** weights.reduce((s, row) => s + row[row.length - 1]!, 0);
    const acc: LevelTable = m.map((row) => row.map(() => 0));
    let matches = 0;
    for (let k = 0; k < accounts; k++) {
      const s0 = pairs.start[k]!;
      const s1 = pairs.start[k + 1]!;
      const K = s1 - s0;
      if (K === 0) continue;
      const n = pairs.before[k]!;
      const lambda = prior / Math.max(n, 1);
      let denom = 1 - prior + lambda * Math.max(n - K, 0) * floor;
      const ls = K <= w.length ? w : new Float64Array(K);
      for (let p = s0; p < s1; p++) {
        let sum = 0;
        for (let i = 0; i < A; i++) {
          const l = pairs.levels[p * A + i]!;
          if (l >= 0) sum += weights[i]![l]!;
        }
        const L = lambda * 2 ** Math.min(sum, 1000);
        ls[p - s0] = L;
        denom += L;
      }
      for (let p = s0; p < s1; p++) {
        const post = ls[p - s0]! / denom;
        if (post <= 0) continue;
        matches += post;
        for (let i = 0; i < A; i++) {
          const l = pairs.levels[p * A + i]!;
          if (l >= 0) acc[i]![l]! += post;
        }
      }
    }
    const next = acc.map((row, i) => {
      const total = row.reduce((s, c) => s + c, 0);
      return capLevels(
        row.map((c) => (c + 0.01) / (total + 0.01 * row.length)),
        capped[i],
      );
    });
    const nextPrior = Math.min(Math.max(matches / Math.max(accounts, 1), 1e-6), 0.999);
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

/** Caps the m of the given levels and gives the excess to the other levels in proportion. */
function capLevels(row: number[], levels: ReadonlySet<number> | undefined): number[] {
  if (!levels || levels.size === 0) return row;
  let excess = 0;
  let rest = 0;
  row.forEach((v, l) => {
    if (levels.has(l) && v > IDENTIFIER_MISMATCH_MAX_M) excess += v - IDENTIFIER_MISMATCH_MAX_M;
    else if (!levels.has(l)) rest += v;
  });
  if (excess === 0 || rest === 0) return row;
  return row.map((v, l) => (levels.has(l) ? Math.min(v, IDENTIFIER_MISMATCH_MAX_M) : v + (excess * v) / rest));
}
