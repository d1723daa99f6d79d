import type { MatchResult } from '../../../src/core/matching';

/**
 * Everything a caller can see of a result: per account (in map order) its ranked duplicates, and
 * the stats but the timings.
 */
export function visible(result: MatchResult): unknown {
  const { buildMs, matchMs, ...stats } = result.stats;
  void buildMs;
  void matchMs;
  return { duplicates: [...result.duplicates.entries()], stats };
}
