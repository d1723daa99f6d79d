import type { MatchResult } from '../src/core/matching';

/**
 * What must be identical however matching is split (threads, child jobs): per account its ranked
 * duplicates, and every stat but the timings and `generatorUse`. That one records which index each
 * account's candidates came from, a cost-based choice over the thread's own neighbour caches
 * (docs/matching.md, "Threads"): it may differ between splits while the candidates do not.
 */
export function resultDigest(results: readonly MatchResult[]): string {
  let out = '';
  for (const r of results) {
    const { buildMs, matchMs, generatorUse, ...stats } = r.stats;
    void buildMs;
    void matchMs;
    void generatorUse;
    out += JSON.stringify([[...r.duplicates.entries()], stats]);
  }
  return out;
}

/** The generator choices alone, to report (not to require) their agreement. */
export function generatorDigest(results: readonly MatchResult[]): string {
  return JSON.stringify(results.map((r) => r.stats.generatorUse));
}
