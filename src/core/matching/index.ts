/** The matching engine: pure (no platform, no Redis); see docs/matching.md. */
export { buildExhaustiveMatcher, buildMatcher, type Matcher } from './matcher';
export { parseMatchingSettings } from './matching-config';
export { scoreValues } from './algorithms';
export { normalizeText } from './normalize';
export * from './types';
