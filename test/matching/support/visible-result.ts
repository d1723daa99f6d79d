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

/**
 * visible() but for `generatorUse`: which index each account's candidates came from is a cost-based
 * choice over a thread's own neighbour caches, so it may differ between splits (threads, child jobs)
 * while the candidates, the duplicates and every other count do not.
 */
export function visibleAcrossSplits(result: MatchResult): unknown {
  const { buildMs, matchMs, generatorUse, ...stats } = result.stats;
  void buildMs;
  void matchMs;
  void generatorUse;
  return { duplicates: [...result.duplicates.entries()], stats };
}
