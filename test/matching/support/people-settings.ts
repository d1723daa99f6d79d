import { parseMatchingSettings } from '../../../src/core/matching';

/** The probabilistic model's attributes on the bench generator's names and e-mail (surname as its own kind). */
const PEOPLE_ATTRIBUTES = [
  { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
  { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92 },
  { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
];

/** The probabilistic model on the bench generator's names and e-mail. */
export const PEOPLE_SETTINGS = parseMatchingSettings({
  matching: { model: 'probabilistic', attributes: PEOPLE_ATTRIBUTES },
});

/** The same, with the login (userName) as a fourth attribute. */
export const PEOPLE_AND_LOGIN_SETTINGS = parseMatchingSettings({
  matching: {
    model: 'probabilistic',
    attributes: [...PEOPLE_ATTRIBUTES, { attribute: 'userName', algorithm: 'levenshtein', threshold: 80 }],
  },
});
