/**
 * Review forms: the lifecycle of the human review of potential duplicates (see docs/review-forms.md).
 * Pure core: talks to the platform only through ReviewPlatformPort and PlatformPort.
 */
export { ReviewFormQueue, reviewSettings, type ReviewFormQueueOptions } from './review-form-queue';
export { readReviewDecisions } from './decisions';
export { resolveReviewers } from './reviewers';
export { NOTIFICATION_WORKFLOW } from './notifications';
export * from './types';
