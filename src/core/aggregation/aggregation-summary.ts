import type { PendingReview } from '../ports/review-queue';

export interface AggregationSummary {
  runId: string;
  sourceId: string;
  /** Source accounts read per authoritative source (before filters). */
  accountsPerSource: Record<string, number>;
  skippedSources: string[];
  machineAccountsSkipped: number;
  filteredOut: number;
  accountsCreated: number;
  accountsUpdated: number;
  /** Existing connector accounts dropped by "Reset accounts?" (the platform deletes them). */
  accountsReset: number;
  accountsEmitted: number;
  potentialDuplicates: number;
  /** New accounts skipped because their review is still open (pending or expired form). */
  awaitingReview: number;
  /** The review queue's own summary (src/core/review ReviewSummary) when the lifecycle is wired. */
  review?: unknown;
  /** The first PENDING_REVIEWS_KEPT (src/core/ports/review-queue.ts); potentialDuplicates counts them all. */
  pendingReviews: PendingReview[];
  baselineIdentities: number;
  /**
   * Probabilistic model only: where this run's parameters came from ('estimated': a full run, from its
   * data; 'stored': the last full run's, from the connector source; 'estimated-from-part': a limited run
   * with none stored) and whether this run stored them.
   */
  modelParameters?: { source: 'estimated' | 'stored' | 'estimated-from-part'; stored: boolean; estimatedAt?: string };
  reset: boolean;
  limitedTo?: number;
  counterFlushes: number;
  elapsedMs: number;
  /**
   * Milliseconds from the run's start to: the identity baseline loaded, every source account read, the
   * first account emitted (absent when none was). How long the platform waited for its first item,
   * and whether the run held its accounts until the end (a full probabilistic run does).
   */
  timings: { baselineMs?: number; sourcesReadMs?: number; firstItemMs?: number };
}
