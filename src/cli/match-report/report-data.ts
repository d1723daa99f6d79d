/**
 * What the tuning tool measures over the pairs the matcher reports: a threshold sweep (forms opened,
 * pairs kept, and precision/recall against a truth file) and a histogram of match weights (scores for
 * the rules model). Pure; the summary text and the HTML report both read it.
 */
import { usedWeight } from '../../core/matching/probabilistic/diagnostics';
import type { MatchingModel, ModelParameters } from '../../core/matching/types';
import { levelWords } from './level-words';

/** One reported pair: the key the threshold applies to (probability, or score/100) and its weight. */
export interface ScoredPair {
  accountId: string;
  /** Probabilistic: the match probability; rules: the overall score / 100. */
  value: number;
  /** Probabilistic: the match weight; rules: the overall score. */
  weight: number;
  correct?: boolean;
  candidateId?: string;
  /** The explanation in one line ("displayName: exact +12.1; ..."). */
  why?: string;
}

export interface SweepPoint {
  threshold: number;
  /** Accounts with at least one pair at or above the threshold: the review forms opened. */
  forms: number;
  pairs: number;
  precision?: number;
  recall?: number;
  /** With a truth file: share of the forms whose account has a true pair at or above the threshold. */
  formPrecision?: number;
}

export interface HistogramBin {
  from: number;
  to: number;
  count: number;
  /** With a truth file: the bin's true and false pairs. */
  trueCount?: number;
  falseCount?: number;
}

/** One comparison level as the model uses it: the weight really added (0 for a neutral level) and its meaning. */
export interface LevelRow {
  attribute: string;
  level: string;
  m: number;
  u: number;
  weight: number;
  neutral: boolean;
  meaning: string;
}

/** A pair for the reviewer's manager: a false form's pair, or a true pair the threshold missed. */
export interface ReviewPair {
  accountId: string;
  candidateId: string;
  /** Probability, or undefined: not a candidate down to the floor. */
  probability?: number;
  why?: string;
}

export interface ReportData {
  model: MatchingModel;
  identities: number;
  accounts: number;
  /** Probabilistic: the configured probabilityThreshold; rules: undefined (per-attribute thresholds). */
  threshold?: number;
  /** Probabilistic: pairs below this probability were not collected. */
  floor?: number;
  /** Where the threshold falls on the weight axis (between the last pair below and the first at or above it). */
  weightThreshold?: number;
  weightLabel: string;
  histogram: HistogramBin[];
  sweepLabel: string;
  sweep: SweepPoint[];
  truthPairs?: number;
  parameters?: ModelParameters;
  /** Probabilistic model: every level with the weight used and its meaning. */
  levels?: LevelRow[];
  /** Configuration warnings (correlated attributes, no evidence, weak generators, candidates per account). */
  warnings?: string[];
  /** With a truth file: the highest false pairs at the threshold and true pairs it missed. */
  falsePairs?: ReviewPair[];
  missedPairs?: ReviewPair[];
  candidatesMean?: number;
  candidatesMax?: number;
}

const PROBABILITY_STEPS = [0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999];
const SCORE_STEPS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 1];

const round4 = (n: number): number => Math.round(n * 10000) / 10000;

/** Thresholds to sweep: the model's steps at or above the floor, and the configured threshold. */
export function sweepThresholds(model: MatchingModel, floor: number, configured?: number): number[] {
  const steps = model === 'probabilistic' ? PROBABILITY_STEPS : SCORE_STEPS;
  const all = new Set(steps.filter((t) => t >= floor));
  if (configured !== undefined) all.add(configured);
  return [...all].sort((a, b) => a - b);
}

export function sweep(pairs: readonly ScoredPair[], thresholds: readonly number[], truthPairs?: number): SweepPoint[] {
  return thresholds.map((threshold) => {
    const forms = new Set<string>();
    const goodForms = new Set<string>();
    let kept = 0;
    let correct = 0;
    for (const p of pairs) {
      if (p.value < threshold) continue;
      kept++;
      forms.add(p.accountId);
      if (p.correct) {
        correct++;
        goodForms.add(p.accountId);
      }
    }
    const point: SweepPoint = { threshold, forms: forms.size, pairs: kept };
    if (truthPairs !== undefined) {
      point.precision = kept > 0 ? round4(correct / kept) : 1;
      point.recall = truthPairs > 0 ? round4(correct / truthPairs) : 1;
      point.formPrecision = forms.size > 0 ? round4(goodForms.size / forms.size) : 1;
    }
    return point;
  });
}

/** histogram() of the pairs' weights; with a truth file each bin also counts its true and false pairs. */
export function pairHistogram(pairs: readonly ScoredPair[], bins = 30): HistogramBin[] {
  const out = histogram(
    pairs.map((p) => p.weight),
    bins,
  );
  if (out.length === 0 || !pairs.some((p) => p.correct !== undefined)) return out;
  for (const b of out) {
    b.trueCount = 0;
    b.falseCount = 0;
  }
  const lo = out[0]!.from;
  const width = out.length > 1 ? (out.at(-1)!.to - lo) / out.length : 0;
  for (const p of pairs) {
    const i = width > 0 ? Math.min(out.length - 1, Math.floor((p.weight - lo) / width)) : 0;
    if (p.correct) out[i]!.trueCount!++;
    else out[i]!.falseCount!++;
  }
  return out;
}

/** Every level of the parameters with the weight the model adds (0 for a neutral level) and its meaning. */
export function levelRows(p: ModelParameters): LevelRow[] {
  return p.attributes.flatMap((a) =>
    a.levels.map((l) => {
      const weight = usedWeight(p, a.attribute, l.level, l.m, l.u);
      const neutral = weight === 0 && Math.abs(Math.log2(l.m / l.u)) > 1e-9;
      return {
        attribute: a.attribute,
        level: l.level,
        m: l.m,
        u: l.u,
        weight: round4(weight),
        neutral,
        meaning: levelWords(l.level),
      };
    }),
  );
}

/** The highest-probability false pairs at or above the threshold (at most `limit`). */
export function falsePairs(pairs: readonly ScoredPair[], threshold: number, limit = 20): ReviewPair[] {
  return pairs
    .filter((p) => p.correct === false && p.value >= threshold)
    .sort((a, b) => b.value - a.value)
    .slice(0, limit)
    .map((p) => ({ accountId: p.accountId, candidateId: p.candidateId ?? '', probability: p.value, why: p.why }));
}

/**
 * True pairs below the threshold (at most `limit`), the closest first; those not collected at all (not
 * candidates, or below the floor) last. `truth`: [accountId, candidateId] of every true pair.
 */
export function missedPairs(
  pairs: readonly ScoredPair[],
  truth: ReadonlyArray<readonly [string, string]>,
  threshold: number,
  limit = 20,
): ReviewPair[] {
  const found = new Map<string, ScoredPair>();
  for (const p of pairs) if (p.correct) found.set(`${p.accountId}\u0000${p.candidateId ?? ''}`, p);
  const out: ReviewPair[] = [];
  for (const [a, c] of truth) {
    const p = found.get(`${a}\u0000${c}`) ?? found.get(`${c}\u0000${a}`);
    if (p && p.value >= threshold) continue;
    out.push(
      p
        ? { accountId: p.accountId, candidateId: p.candidateId ?? c, probability: p.value, why: p.why }
        : { accountId: a, candidateId: c },
    );
  }
  return out.sort((x, y) => (y.probability ?? -1) - (x.probability ?? -1)).slice(0, limit);
}

/** Equal-width bins over the weights (at most `bins`, at least one). */
function histogram(weights: readonly number[], bins = 30): HistogramBin[] {
  if (weights.length === 0) return [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const w of weights) {
    if (w < lo) lo = w;
    if (w > hi) hi = w;
  }
  if (hi === lo) return [{ from: lo, to: hi, count: weights.length }];
  const width = (hi - lo) / bins;
  const out: HistogramBin[] = Array.from({ length: bins }, (_, i) => ({
    from: round4(lo + i * width),
    to: round4(i === bins - 1 ? hi : lo + (i + 1) * width),
    count: 0,
  }));
  for (const w of weights) out[Math.min(bins - 1, Math.floor((w - lo) / width))]!.count++;
  return out;
}

/**
 * The weight at which pairs cross the probability threshold, read from the pairs themselves (the
 * model's mapping from weight to probability includes its prior): midway between the highest weight
 * below the threshold and the lowest at or above it.
 */
export function weightAtThreshold(pairs: readonly ScoredPair[], threshold: number): number | undefined {
  let below = -Infinity;
  let above = Infinity;
  for (const p of pairs) {
    if (p.value >= threshold) above = Math.min(above, p.weight);
    else below = Math.max(below, p.weight);
  }
  if (above === Infinity && below === -Infinity) return undefined;
  if (above === Infinity) return below;
  if (below === -Infinity) return above;
  return round4((above + below) / 2);
}
