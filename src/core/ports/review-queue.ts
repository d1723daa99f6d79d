import type { LevelContribution } from './match-explanation';

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
  /** Probabilistic model only: match probability 0-1, total match weight, and the per-attribute levels. */
  probability?: number;
  matchWeight?: number;
  explanation?: LevelContribution[];
  /**
   * What the form shows of the candidate (display name, attribute values), taken from the baseline the
   * run already read: the review never looks a candidate up on the platform. Shared between the
   * reviews that list the same candidate (CandidateDirectory): never changed.
   */
  details?: Readonly<{ name?: string; attributes?: Readonly<Record<string, unknown>> }>;
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

/**
 * A review queue with a lifecycle (src/core/review ReviewFormQueue): decisions read at the start of
 * a run are applied by the aggregation, which then completes them; see docs/review-forms.md.
 */
export interface ReviewQueue {
  /** Queues the account's review; forms are created by `send()`, once the run knows all of them. */
  submit(review: PendingReview): Promise<void>;
  /** After matching: creates the run's forms and sends one notification per reviewer (owed ones too). */
  send?(): Promise<void>;
  /** Decisions per source account id, read once at the start of a run. */
  readDecisions?(): Promise<Map<string, ReviewDecisionView>>;
  /** Called at the end of a run with the decisions the run applied, by source account id (deletes their forms). */
  completeDecisions?(accountIds: readonly string[]): Promise<void>;
  /** Deletes forms of accounts not in `seen`; only called after a run that read every account. */
  discardUnseen?(seen: ReadonlySet<string>): Promise<number>;
  logSummary?(): void;
  summary?(): unknown;
}

/** The part of a review decision the aggregation acts on (src/core/review ReviewDecision satisfies it). */
export type ReviewDecisionView =
  | { kind: 'new-identity' }
  | { kind: 'link'; identityId: string; candidateKind: 'identity' | 'account' }
  | { kind: 'pending' }
  | { kind: 'expired' }
  | { kind: 'invalid' };

/**
 * Pending reviews a run keeps in memory to report (the run summary, RecordingReviewQueue): each holds
 * the account's merged attributes and its candidates, so a run with many potential duplicates would
 * otherwise grow with them. The count is always complete.
 */
export const PENDING_REVIEWS_KEPT = 10_000;

export class RecordingReviewQueue implements ReviewQueue {
  /** The first PENDING_REVIEWS_KEPT reviews submitted. */
  readonly pending: PendingReview[] = [];
  /** Reviews submitted, kept or not. */
  submitted = 0;

  async submit(review: PendingReview): Promise<void> {
    this.submitted++;
    if (this.pending.length < PENDING_REVIEWS_KEPT) this.pending.push(review);
  }
}
