/** Public types of the review-form lifecycle (see docs/review-forms.md). */
import type { CandidateKind } from '../matching/types';
import type { FormInstanceState } from '../ports/review-platform';

/** An identity that receives review forms. */
export interface Reviewer {
  id: string;
  name: string;
  /** From the identity's email, mail or emailAddress attribute; notifications need it. */
  email?: string;
  /** Why the identity reviews: it holds "<source> Reviewer", and/or it owns the connector's source. */
  via: Array<'access-profile' | 'owner'>;
}

export interface ReviewerResolution {
  reviewers: Reviewer[];
  /** Why the list is empty or smaller than expected, in operator words (empty when all is well). */
  problems: string[];
}

/** What every decision says about its form. */
export interface ReviewFormRef {
  /** Platform id of the source account under review (the key of the form). */
  accountId: string;
  accountName: string;
  sourceName: string;
  /** When the review was first sent (ISO). */
  since: string;
  /** Identity ids the current (or last) form instance is addressed to. */
  reviewers: string[];
}

/**
 * The state of one account's review, read at the start of a run:
 * - `new-identity`: the reviewer said "not a duplicate": create the connector account;
 * - `link`: "same person as `identityId`" (a candidate of the form; `candidateKind` as the matcher
 *   reported it: 'identity' = an identity id or a connector account key of an earlier run,
 *   'account' = a source account id);
 * - `pending`: nobody answered yet and the form has not expired;
 * - `expired`: the form expired unanswered; `renewed` tells whether it was sent again in this run
 *   (round 2) or has expired for the last time (reported in every run until the operator acts);
 * - `invalid`: the answer could not be understood; it was logged as an error and the form was
 *   deleted, so the account gets a new form when it is submitted again.
 */
export type ReviewDecision = ReviewFormRef &
  (
    | { kind: 'new-identity'; formInstanceId: string; decidedAt?: string; comments?: string }
    | {
        kind: 'link';
        identityId: string;
        candidateKind: CandidateKind;
        formInstanceId: string;
        decidedAt?: string;
        comments?: string;
      }
    | { kind: 'pending'; state: FormInstanceState; expiresAt?: string; url?: string }
    | { kind: 'expired'; rounds: number; renewed: boolean; expiresAt?: string }
    | { kind: 'invalid'; reason: string }
  );

export interface PendingReviewEntry {
  accountId: string;
  accountName: string;
  sourceName: string;
  since: string;
  /** Days since the review was first sent, one decimal. */
  ageDays: number;
  reviewers: string[];
  state: FormInstanceState;
  expiresAt?: string;
  url?: string;
}

export interface CreatedFormEntry {
  accountId: string;
  accountName: string;
  sourceName: string;
  candidatesTotal: number;
  candidatesShown: number;
  reviewers: string[];
  expiresAt: string;
}

export interface DecidedEntry {
  accountId: string;
  accountName: string;
  sourceName: string;
  kind: 'new-identity' | 'link';
  identityId?: string;
}

export interface ExpiredEntry {
  accountId: string;
  accountName: string;
  sourceName: string;
  since: string;
  /** Form instances that expired unanswered so far. */
  rounds: number;
  /** Sent again in this run (false: expired for good, or no reviewer to send it to). */
  renewed: boolean;
  expiresAt?: string;
}

export interface ProblemEntry {
  accountId: string;
  accountName: string;
  sourceName: string;
  reason: string;
}

/**
 * What the aggregation summary includes about reviews. Every waiting account is in `pending`, `expired` or
 * `noReviewer`.
 */
export interface ReviewSummary {
  formsCreated: number;
  created: CreatedFormEntry[];
  /** Reviews waiting for an answer (created in this run, renewed, or older). */
  pending: PendingReviewEntry[];
  decided: DecidedEntry[];
  expired: ExpiredEntry[];
  /** Accounts with potential duplicates and nobody to review them (spec rule 5): error-level. */
  noReviewer: ProblemEntry[];
  /** Answers that could not be understood: error-level; a new form follows. */
  invalid: ProblemEntry[];
  notificationsSent: number;
  /** Notifications that could not be sent (no e-mail, workflow failure): warn-level. */
  notificationProblems: ProblemEntry[];
}

export function emptyReviewSummary(): ReviewSummary {
  return {
    formsCreated: 0,
    created: [],
    pending: [],
    decided: [],
    expired: [],
    noReviewer: [],
    invalid: [],
    notificationsSent: 0,
    notificationProblems: [],
  };
}
