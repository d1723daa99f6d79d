/**
 * The review-flood guard (#26): a run whose matching would send more than matching.maxReviewShare of
 * its new accounts to review stops before any review form or notification exists (forms are only
 * created once matching is over), with REVIEW_FLOOD. Below MIN_ACCOUNTS_JUDGED new accounts a share
 * says little (1 of 3 is a third) and the forms stay few: the guard stays out of it.
 */
import { FusionError } from '../errors';
import { DEFAULT_MAX_REVIEW_SHARE, type MatchingSettings } from '../matching/types';
import type { AggregationSummary } from './aggregation-summary';

const MIN_ACCOUNTS_JUDGED = 100;

function percent(x: number): string {
  return `${(Math.round(x * 1000) / 10).toFixed(1)} %`;
}

export function checkReviewFlood(
  settings: Pick<MatchingSettings, 'maxReviewShare'>,
  summary: Pick<AggregationSummary, 'accountsCreated' | 'potentialDuplicates'>,
): void {
  const limit = settings.maxReviewShare ?? DEFAULT_MAX_REVIEW_SHARE;
  const toReview = summary.potentialDuplicates;
  const matched = summary.accountsCreated + toReview;
  if (limit >= 1 || matched < MIN_ACCOUNTS_JUDGED) return;
  const share = toReview / matched;
  if (share <= limit) return;
  throw new FusionError(
    'REVIEW_FLOOD',
    `The aggregation stopped before creating any review form: matching would send ${toReview} of ${matched} new accounts (${percent(share)}) to review, above matching.maxReviewShare ${percent(limit)}. Check the matching settings with "fusion-proxy match --report" (an attribute that matches everyone, a threshold too low). For a first aggregation of a source whose accounts mostly belong to existing identities, raise matching.maxReviewShare for that run (1 switches the guard off).`,
    { share: Math.round(share * 1000) / 1000, toReview, newAccounts: matched, maxReviewShare: limit },
  );
}
