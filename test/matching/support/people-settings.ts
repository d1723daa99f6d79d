import { parseMatchingSettings } from '../../../src/core/matching';

/** The probabilistic model on the bench generator's names and e-mail (surname as its own kind). */
export const PEOPLE_SETTINGS = parseMatchingSettings({
  matching: {
    model: 'probabilistic',
    attributes: [
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
      { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92 },
      { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
    ],
  },
});
