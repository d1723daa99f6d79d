import type { MatchingSettings } from '../../../src/core/matching';

/** Two rules configurations: a mandatory name with optional others, and no mandatory attribute at all. */
export const RULES: MatchingSettings[] = [
  {
    attributes: [
      { attribute: 'a', algorithm: 'name-matcher', threshold: 80, mandatory: true },
      { attribute: 'b', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
      { attribute: 'c', algorithm: 'exact', threshold: 100, mandatory: false },
    ],
    reviewTopK: 3,
  },
  {
    attributes: [
      { attribute: 'a', algorithm: 'dice', threshold: 60, mandatory: false },
      { attribute: 'b', algorithm: 'levenshtein', threshold: 70, mandatory: false },
      { attribute: 'c', algorithm: 'double-metaphone', threshold: 100, mandatory: false },
    ],
    reviewTopK: 10,
  },
];
