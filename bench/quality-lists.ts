/** The attribute lists bench:quality scores the HR-like sets with (issue 26). */

/** The configuration of docs/matching-probabilistic.md. */
export const DOCUMENTED = {
  model: 'probabilistic',
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
    { attribute: 'email', algorithm: 'exact', threshold: 100, kind: 'email' },
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
    { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100, kind: 'identifier' },
  ],
};

/** The documented list and an attribute whose values are random (no evidence at all). */
export const DOCUMENTED_RANDOM = {
  ...DOCUMENTED,
  attributes: [...DOCUMENTED.attributes, { attribute: 'randomCode', algorithm: 'exact', threshold: 100 }],
};

/** The list an administrator writes for HR-like data (issue 26): no kinds, overlapping names, a department. */
export const ADMIN = {
  model: 'probabilistic',
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'firstName', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'lastName', algorithm: 'jaro-winkler', threshold: 85 },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
    { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100 },
    { attribute: 'department', algorithm: 'exact', threshold: 100 },
  ],
};
