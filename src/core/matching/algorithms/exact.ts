import type { Kernel } from './kernel';

/** 100 when the normalised values are equal, else 0. */
export const exactKernel: Kernel<string> = {
  algorithm: 'exact',
  prepare: (s) => s,
  score: (a, b) => (a === b ? 100 : 0),
  filter: (threshold) =>
    threshold <= 0 ? { kind: 'all' } : { kind: 'keys', lossless: true, keys: (p, out) => void out.push(p) },
};
