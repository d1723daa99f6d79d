/**
 * u's evidence: level counts of random pairs of the records held (every pair once when there are
 * fewer than the sample), drawn with a seed from the record count so every estimate over the same
 * records draws the same pairs.
 */
import type { AttributeRuntime } from '../attribute-runtime';
import { MODEL_STEP, type Steps, ticker } from '../steps';
import { MISSING } from './comparators';
import { type LevelTable, seededRandom } from './estimate';
import { DEFERRED_SCORE, type RecordFeatures } from './record-features';

/** Random pairs drawn for u. */
export const U_SAMPLE = 100_000;

export interface RandomPairCounts {
  /** Per attribute, per level: random pairs at that level. */
  counts: LevelTable;
  draws: number;
  /** Pairs of the n records. */
  total: number;
}

export function* randomPairCounts(
  f: RecordFeatures,
  runtimes: readonly AttributeRuntime[],
  n: number,
): Steps<RandomPairCounts> {
  const A = runtimes.length;
  const tick = ticker(MODEL_STEP);
  const counts: LevelTable = f.comparators.map((c) => c.levels.map(() => 0));
  const rnd = seededRandom(n * 7919 + A);
  const sc = new Float64Array(A);
  const lv = new Int8Array(A);
  const total = (n * (n - 1)) / 2;
  const draws = Math.min(U_SAMPLE, total);
  for (let s = 0; s < draws; s++) {
    let a: number;
    let b: number;
    if (total <= U_SAMPLE) {
      // Small input: every pair once (s-th pair in row order).
      a = Math.floor((1 + Math.sqrt(1 + 8 * s)) / 2);
      b = s - (a * (a - 1)) / 2;
    } else {
      a = Math.floor(rnd() * n);
      b = Math.floor(rnd() * (n - 1));
      if (b >= a) b++;
    }
    // Scores only where a level needs one (values that differ, and not a part inside its whole).
    for (let i = 0; i < A; i++) {
      const rt = runtimes[i]!;
      sc[i] = rt.hasValue(a) && rt.hasValue(b) ? DEFERRED_SCORE : -1;
    }
    f.pairLevels(a, b, sc, 0, lv);
    for (let i = 0; i < A; i++) if (lv[i] !== MISSING) counts[i]![lv[i]!]!++;
    if (tick()) yield;
  }
  return { counts, draws, total };
}
