/** The matching engine: pure (no platform, no Redis); see README "Matching". */
export { buildExhaustiveMatcher, buildMatcher, compareDuplicates, type Matcher } from './matcher';
export { DEFAULT_REVIEW_TOP_K, parseMatchingSettings } from './matching-config';
export { scoreValues } from './algorithms';
export { attributeValues, normalizeText } from './normalize';
export * from './types';
