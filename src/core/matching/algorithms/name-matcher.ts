import { NameIndex } from '../indexes/name-index';
import type { Kernel } from './kernel';
import { nameScore, prepareName, type NameValue } from './name-similarity';

export const nameMatcherKernel: Kernel<NameValue> = {
  algorithm: 'name-matcher',
  prepare: prepareName,
  score: nameScore,
  // Lossless token-level index (indexes/name-index.ts).
  filter: (threshold) =>
    threshold <= 0 ? { kind: 'all' } : { kind: 'custom', build: (values) => new NameIndex(values, threshold) },
};
