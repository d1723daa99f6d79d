import { type Kernel, type OverlapFilter, minRaw, toScore } from './kernel';

export interface DiceValue {
  text: string;
  /** Bigram codes (multiset), sorted ascending. */
  grams: Uint32Array;
}

function prepareDice(text: string): DiceValue {
  const n = text.length - 1 > 0 ? text.length - 1 : 0;
  const grams = new Uint32Array(n);
  for (let i = 0; i < n; i++) grams[i] = text.charCodeAt(i) * 65536 + text.charCodeAt(i + 1);
  grams.sort();
  return { text, grams };
}

/**
 * Sørensen-Dice over the multisets of character bigrams: 2|A∩B| / (|A| + |B|). Values of one
 * character have no bigram: 100 when equal, else 0.
 */
function diceScore(a: DiceValue, b: DiceValue): number {
  if (a.text === b.text) return 100;
  const x = a.grams;
  const y = b.grams;
  const nx = x.length;
  const ny = y.length;
  if (nx === 0 || ny === 0) return 0;
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < nx && j < ny) {
    const u = x[i]!;
    const v = y[j]!;
    if (u === v) {
      common++;
      i++;
      j++;
    } else if (u < v) i++;
    else j++;
  }
  return toScore((2 * common) / (nx + ny));
}

/** Size filter t/(2-t) <= |A|/|B| <= (2-t)/t and overlap |A∩B| >= t(|A|+|B|)/2 (set-similarity join bounds). */
function diceOverlapFilter(threshold: number): OverlapFilter<DiceValue> {
  const t = minRaw(threshold);
  const ratio = t / (2 - t);
  return {
    kind: 'overlap',
    size: (p) => p.grams.length,
    tokenKeys: (p, out) => {
      for (let i = 0; i < p.grams.length; i++) out.push(p.grams[i]!);
    },
    lengthOk: (m, n) => {
      if (m === 0 || n === 0) return m === n;
      const lo = m < n ? m : n;
      const hi = m < n ? n : m;
      return lo >= ratio * hi;
    },
    minOverlap: (m, n) => (m === 0 || n === 0 ? 0 : (t * (m + n)) / 2),
    partnerRange: (m) => (m === 0 ? [0, 0] : [Math.max(1, Math.floor(m * ratio)), Math.ceil(m / ratio)]),
  };
}

export const diceKernel: Kernel<DiceValue> = {
  algorithm: 'dice',
  prepare: prepareDice,
  score: diceScore,
  filter: (threshold) => (threshold <= 0 ? { kind: 'all' } : diceOverlapFilter(threshold)),
};
