/** How the review lifecycle words what happened, in the log and the run summary. */
import type { Logger } from '../ports/logger';
import { DAY_MS } from './queue-context';
import { reviewerProfileName } from './reviewers';
import type { PendingReviewEntry, ReviewFormRef, ReviewSummary } from './types';

function ageDays(since: string, now: Date): number {
  const t = Date.parse(since);
  return Number.isNaN(t) ? 0 : Math.round(((now.getTime() - t) / DAY_MS) * 10) / 10;
}

export function label(r: { accountName: string; sourceName: string; accountId: string }): string {
  return `${r.accountName} [${r.sourceName}] (account id ${r.accountId})`;
}

export interface AccountRef {
  accountId: string;
  accountName: string;
  sourceName: string;
}

/** Spec rule 5: a potential duplicate nobody can review is an error, in the log and the summary. */
export function reportNoReviewer(
  stats: ReviewSummary,
  log: Logger,
  ref: AccountRef,
  problems: string[],
  what: string,
): void {
  const reason = problems.join('; ') || 'no reviewer was found';
  stats.noReviewer.push({ accountId: ref.accountId, accountName: ref.accountName, sourceName: ref.sourceName, reason });
  log.error(
    { accountId: ref.accountId, source: ref.sourceName, reason },
    `No reviewer for the potential duplicate ${label(ref)}: ${reason}. ${what}; the account is not aggregated until it can be reviewed. Assign the access profile "${reviewerProfileName(ref.sourceName)}" to a reviewer or switch on "Owner is global reviewer?"`,
  );
}

/** One line with the counts and the pending reviews (account, age, reviewers). */
export function logReviewSummary(s: ReviewSummary, log: Logger, maxListed: number): void {
  const pending = s.pending.slice(0, maxListed).map((p) => ({
    account: `${p.accountName} [${p.sourceName}]`,
    accountId: p.accountId,
    ageDays: p.ageDays,
    reviewers: p.reviewers,
  }));
  const line = {
    formsCreated: s.formsCreated,
    pending: s.pending.length,
    decided: s.decided.length,
    expired: s.expired.length,
    noReviewer: s.noReviewer.length,
    invalid: s.invalid.length,
    notificationsSent: s.notificationsSent,
    notificationProblems: s.notificationProblems.length,
    pendingReviews: pending,
    ...(s.pending.length > maxListed ? { pendingNotListed: s.pending.length - maxListed } : {}),
  };
  const msg = `Reviews: ${s.formsCreated} created, ${s.pending.length} pending, ${s.decided.length} decided, ${s.expired.length} expired, ${s.noReviewer.length} without reviewer, ${s.invalid.length} invalid, ${s.notificationsSent} notification(s) sent`;
  if (s.noReviewer.length || s.invalid.length) log.error(line, msg);
  else if (s.expired.length || s.notificationProblems.length) log.warn(line, msg);
  else log.info(line, msg);
}

/** A waiting review as the summary lists it. */
export function pendingEntry(
  ref: ReviewFormRef,
  state: PendingReviewEntry['state'],
  now: Date,
  expiresAt?: string,
  url?: string,
): PendingReviewEntry {
  return {
    accountId: ref.accountId,
    accountName: ref.accountName,
    sourceName: ref.sourceName,
    since: ref.since,
    ageDays: ageDays(ref.since, now),
    reviewers: ref.reviewers,
    state,
    ...(expiresAt ? { expiresAt } : {}),
    ...(url ? { url } : {}),
  };
}
