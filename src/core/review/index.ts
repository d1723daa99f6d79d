/**
 * Review forms: the lifecycle of the human review of potential duplicates (see README "Review forms").
 * Pure core: talks to the platform only through ReviewPlatformPort and PlatformPort.
 */
export { ReviewFormQueue, REVIEW_ROUNDS, reviewSettings, type ReviewFormQueueOptions } from './review-form-queue';
export { readReviewDecisions, type ReadDecisionsQuery } from './decisions';
export { resolveReviewers, reviewerProfileName, type ReviewerPorts, type ReviewerQuery } from './reviewers';
export { NOTIFICATION_WORKFLOW } from './notifications';
export { FORM_NAME_PREFIX, formName } from './form-naming';
export { coerceToggle } from './form-answer';
export * from './types';
