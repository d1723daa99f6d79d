/**
 * A careless list with no display name: firstName, lastName and email, all Jaro-Winkler 85, no
 * kinds. The model had no names for a record, so it took every attribute's tokens for them (the
 * address's domain included), read firstName as a login built from those names, and counted an
 * address built from the names as evidence of its own: on the simulator's varied tenant (20k) the
 * estimate concluded that 77 % of the accounts had a match and sent 6,493 forms at precision 0.118.
 */
import { buildMatcher, parseMatchingSettings } from '../../src/core/matching';
import { attributeValues, nameTokens } from '../../src/core/matching/normalize';
import { configuredRoles, detectRoles, recordNames } from '../../src/core/matching/probabilistic/attribute-roles';
import { simulatorRecords } from './support/simulator-records';

const careless = (names: string[]) =>
  parseMatchingSettings({
    matching: {
      model: 'probabilistic',
      attributes: names.map((attribute) => ({ attribute, algorithm: 'jaro-winkler', threshold: 85 })),
    },
  }).attributes;

const ROWS = Array.from({ length: 300 }, (_, k) => {
  const first = ['edward', 'anna', 'ben', 'carla', 'dirk'][k % 5]!;
  const last = `kel${String.fromCharCode(97 + (k % 26))}${String.fromCharCode(97 + ((k * 7) % 26))}ley`;
  return { firstName: first, lastName: last, email: `${first}.${last}@corp.example.com`, title: 'Analyst' };
});

function rolesOf(attributes: string[]) {
  const rules = careless(attributes);
  const value = (i: number, r: number): string =>
    attributeValues(ROWS[r]![rules[i]!.attribute as keyof (typeof ROWS)[0]])[0] ?? '';
  const roles = detectRoles(rules, value, ROWS.length);
  return { roles, value };
}

describe('first name, surname and e-mail, no display name', () => {
  it('the given name and the surname are the record names, and no attribute is read as a login', () => {
    const { roles, value } = rolesOf(['firstName', 'lastName', 'email']);
    expect(roles.kinds).toEqual(['name', 'surname', 'email']);
    expect(roles.partOf).toEqual([-1, -1, -1]);
    expect(recordNames(roles, (i) => nameTokens(value(i, 0)))).toEqual(['edward', 'kelaaley']);
    // Stored parameters without roles read the same kinds, and no surname part of a given name.
    expect(configuredRoles(careless(['firstName', 'lastName', 'email']))).toEqual(roles);
  });

  it('a given name of two words (Jean-Luc) keeps the surname among the names', () => {
    const { roles } = rolesOf(['firstName', 'lastName', 'email']);
    const tokens = [nameTokens('jean-luc'), nameTokens('picard'), nameTokens('jeanluc.picard@corp.example.com')];
    expect(recordNames(roles, (i) => tokens[i])).toEqual(['jean', 'luc', 'picard']);
  });

  it("without a name, other attributes' tokens are not the record's names", () => {
    // Only a surname by its attribute name: nothing is promoted, and the names stay empty.
    const { roles, value } = rolesOf(['lastName', 'email', 'title']);
    expect(roles.kinds).toEqual(['text', 'email', 'text']);
    expect(recordNames(roles, (i) => nameTokens(value(i, 0)))).toEqual([]);
  });

  it('a configured kind or a name attribute in the list keeps the kinds as they were', () => {
    const withName = parseMatchingSettings({
      matching: {
        model: 'probabilistic',
        attributes: [
          { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
          { attribute: 'firstName', algorithm: 'jaro-winkler', threshold: 85 },
          { attribute: 'lastName', algorithm: 'jaro-winkler', threshold: 85, kind: 'text' },
        ],
      },
    }).attributes;
    expect(configuredRoles(withName).kinds).toEqual(['name', 'text', 'text']);
  });

  it('on the simulator tenant with varied surnames the review forms go to the planted duplicates', () => {
    const { identities, accounts, planted } = simulatorRecords({ seed: 7, surnames: 'varied' });
    const matcher = buildMatcher(
      parseMatchingSettings({
        matching: { model: 'probabilistic', attributes: careless(['firstName', 'lastName', 'email']) },
      }),
    );
    matcher.addBaseline(identities);
    const estimate = matcher.estimate(accounts);
    // About the planted 10 %, not most of the accounts.
    expect(estimate?.parameters.prior).toBeLessThan(0.2);
    const { duplicates } = matcher.match(accounts);
    const falseForms = [...duplicates.keys()].filter((id) => !planted.has(id));
    expect(duplicates.size).toBeGreaterThan(50);
    expect(falseForms.length / duplicates.size).toBeLessThanOrEqual(0.1);
  });
});
