/** What the parts of one run's review queue share (options, the run's summary, its notices). */
import type { Logger } from '../ports/logger';
import type { CallOptions, PlatformPort } from '../ports/platform';
import type { ReviewPlatformPort } from '../ports/review-platform';
import type { ReviewNotices } from './review-notices';
import type { ReviewerResolution, ReviewSummary } from './types';

export interface ReviewFormQueueOptions {
  review: ReviewPlatformPort;
  /**
   * Reviewer e-mails (getIdentity of the source owner) and, when given getSource and
   * patchSourceConnectorAttributes, the notification outbox on the connector's source.
   */
  platform: Pick<PlatformPort, 'getIdentity'> &
    Partial<Pick<PlatformPort, 'getSource' | 'patchSourceConnectorAttributes'>>;
  /** The connector's own source: owns the forms, creates the instances, its owner may review. */
  fusionSource: { id: string; name: string; owner?: { id: string; name: string } };
  /** "Owner is global reviewer?" */
  ownerIsGlobalReviewer: boolean;
  /** "Manual review expiration days" (renewed forms; new forms use PendingReview.expiresAt when it lies ahead). */
  expirationDays: number;
  /** matching.reviewTopK: candidates shown in detail; all candidates stay listed. */
  topK: number;
  /** Forms created at once (callsInFlight: the rate limiter, not each call's latency, paces them). Default 1. */
  formsInFlight?: number;
  logger: Logger;
  signal?: AbortSignal;
  now?: () => Date;
}

export interface QueueContext {
  o: ReviewFormQueueOptions;
  opts: CallOptions;
  now: () => Date;
  log: Logger;
  stats: ReviewSummary;
  notices: ReviewNotices;
  reviewersFor(sourceName: string): Promise<ReviewerResolution>;
}

/** Form instances an account's review gets before it is reported as expired for good. */
export const REVIEW_ROUNDS = 2;
export const DAY_MS = 86_400_000;

/** Form calls a run keeps in flight (ReviewFormQueueOptions.formsInFlight; one at a time when unset). */
export function formsInFlight(o: Pick<ReviewFormQueueOptions, 'formsInFlight'>): number {
  return o.formsInFlight ?? 1;
}

/** When a form instance sent now expires: "Manual review expiration days" from now. */
export function fullTermExpiry(c: Pick<QueueContext, 'now' | 'o'>, now: Date = c.now()): string {
  return new Date(now.getTime() + c.o.expirationDays * DAY_MS).toISOString();
}
