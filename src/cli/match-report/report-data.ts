/**
 * What the tuning tool measures over the pairs the matcher reports: a threshold sweep (forms opened,
 * pairs kept, and precision/recall against a truth file) and a histogram of match weights (scores for
 * the rules model). Pure; the summary text and the HTML report both read it.
 */
import type { MatchingModel, ModelParameters } from '../../core/matching/types';

/** One reported pair: the key the threshold applies to (probability, or score/100) and its weight. */
export interface ScoredPair {
  accountId: string;
  /** Probabilistic: the match probability; rules: the overall score / 100. */
  value: number;
  /** Probabilistic: the match weight; rules: the overall score. */
  weight: number;
  correct?: boolean;
}

export interface SweepPoint {
  threshold: number;
  /** Accounts with at least one pair at or above the threshold: the review forms opened. */
  forms: number;
  pairs: number;
  precision?: number;
  recall?: number;
}

export interface HistogramBin {
  from: number;
  to: number;
  count: number;
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
    let kept = 0;
    let correct = 0;
    for (const p of pairs) {
      if (p.value < threshold) continue;
      kept++;
      forms.add(p.accountId);
      if (p.correct) correct++;
    }
    const point: SweepPoint = { threshold, forms: forms.size, pairs: kept };
    if (truthPairs !== undefined) {
      point.precision = kept > 0 ? round4(correct / kept) : 1;
      point.recall = truthPairs > 0 ? round4(correct / truthPairs) : 1;
    }
    return point;
  });
}

/** Equal-width bins over the weights (at most `bins`, at least one). */
export function histogram(weights: readonly number[], bins = 30): HistogramBin[] {
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
