import type { CandidateIndex } from '../indexes/candidate-collector';
import type { Algorithm } from '../types';

/**
 * Filters that keep every pair whose score can reach the threshold ("overlap" and "keys" with
 * lossless=true), a lossy blocking key ("keys" with lossless=false), or none ("all").
 */
export interface OverlapFilter<P> {
  kind: 'overlap';
  /** The size used by the bounds (string length, or bigram count for Dice). */
  size(p: P): number;
  /** Multiset of numeric tokens (q-grams or characters) the overlap is counted on. */
  tokenKeys(p: P, out: number[]): void;
  /** False when sizes (m, n) alone rule the pair out (length filter). Symmetric. */
  lengthOk(m: number, n: number): boolean;
  /** Shared tokens (multiset) a passing pair of sizes (m, n) must have; <= 0: no guarantee. Symmetric. */
  minOverlap(m: number, n: number): number;
  /** Inclusive range of partner sizes worth checking for size m (a superset of lengthOk). */
  partnerRange(m: number): [number, number];
}

export interface KeyFilter<P> {
  kind: 'keys';
  /** Blocking keys; a pair is a candidate when it shares one key. */
  keys(p: P, out: string[]): void;
  /** True when every pair that can reach the threshold shares a key. */
  lossless: boolean;
}

export interface NoFilter {
  kind: 'all';
}

/** An algorithm-specific index (the name matcher's token index). */
export interface CustomFilter<P> {
  kind: 'custom';
  build(values: readonly (readonly P[])[]): CandidateIndex;
}

export type CandidateFilter<P> = OverlapFilter<P> | KeyFilter<P> | NoFilter | CustomFilter<P>;

export interface Kernel<P> {
  algorithm: Algorithm;
  /** Per-value precomputation from the normalised text; null: not comparable (treated as missing). */
  prepare(normalised: string): P | null;
  /** Similarity 0-100 with one decimal. Must not allocate per call. */
  score(a: P, b: P): number;
  filter(threshold: number): CandidateFilter<P>;
}

/** raw similarity 0..1 -> 0-100 with one decimal. */
export function toScore(raw: number): number {
  return Math.round(raw * 1000) / 10;
}

/**
 * Lowest raw similarity (0..1) that can still round to a score >= threshold, loosened by a little
 * so float noise can never make a filter drop a passing pair.
 */
export function minRaw(threshold: number): number {
  return (threshold - 0.05) / 100 - 1e-9;
}
