/**
 * Where the aggregation sends a new account that has potential duplicates: it is NOT emitted as
 * a new connector account and waits for a human decision. The review-form lifecycle (forms,
 * reviewers, expiry, decisions) is a later task; it will implement this port on top of
 * src/core/ports/review-platform.ts. Until then RecordingReviewQueue keeps the pending reviews
 * for the run summary.
 */
export interface ReviewCandidate {
  candidateId: string;
  candidateKind: 'identity' | 'account';
  score: number;
  scores: Record<string, number>;
}

export interface PendingReview {
  /** Platform id of the source account waiting for review. */
  accountId: string;
  accountName: string;
  sourceName: string;
  /** Merged attributes of the account (what a reviewer compares). */
  attributes: Record<string, unknown>;
  candidates: ReviewCandidate[];
  /** Identity ids of the reviewers: the source owner when "Owner is global reviewer?" is on. */
  reviewers: string[];
  /** ISO time after which the review expires ("Manual review expiration days"). */
  expiresAt: string;
}

export interface ReviewQueue {
  submit(review: PendingReview): Promise<void>;
}

export class RecordingReviewQueue implements ReviewQueue {
  readonly pending: PendingReview[] = [];

  async submit(review: PendingReview): Promise<void> {
    this.pending.push(review);
  }
}
