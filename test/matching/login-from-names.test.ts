/**
 * A login built from the names (uid isabella.kelathson, or isabella.kelathson1 once a namesake held
 * the name) is a part of the display name: the names inside it are the display name's evidence. Its
 * number made it look like a second, independent agreement ("fuzzy >= 90", odds of 2^16 to one), and
 * on the simulator's tenants most review forms went to namesakes (100k identities, varied surnames:
 * 22.8 % of 25,434 forms named the planted duplicate). The attribute list is the one the aggregation
 * benches use, an administrator's natural one (surname, display name, e-mail, login).
 */
import { buildMatcher } from '../../src/core/matching';
import { detectRoles, partInside } from '../../src/core/matching/probabilistic/attribute-roles';
import { attributeValues } from '../../src/core/matching/normalize';
import { SIMULATOR_LIST as SETTINGS, simulatorRecords } from './support/simulator-records';

describe('a login built from the names', () => {
  it('lies inside the display name whatever its number', () => {
    expect(partInside(['isabella', 'kelathson1'], ['isabella', 'kelathson'])).toBe(true);
    expect(partInside(['isabella', 'kelathson', '2'], ['isabella', 'kelathson'])).toBe(true);
    expect(partInside(['isabella', 'kelathson'], ['isabella', 'kelathson'])).toBe(true);
    // Other letters are other names; a number alone holds none.
    expect(partInside(['isabella', 'kelathsen1'], ['isabella', 'kelathson'])).toBe(false);
    expect(partInside(['ikelathson'], ['isabella', 'kelathson'])).toBe(false);
    expect(partInside(['12345'], ['isabella', 'kelathson'])).toBe(false);
    // An employee number is no name, even beside a middle initial.
    expect(partInside(['e10023'], ['john', 'e', 'smith'])).toBe(false);
    expect(partInside([], ['isabella', 'kelathson'])).toBe(false);
  });

  it('is read as a part of the display name, also where most logins carry a number', () => {
    const rows = Array.from({ length: 200 }, (_, k) => {
      const first = ['anna', 'ben', 'carla', 'dirk'][k % 4]!;
      const last = `smith${String.fromCharCode(97 + (k % 26))}`;
      return {
        lastName: last,
        displayName: `${first} ${last}`,
        email: `${first}.${last}@corp.example`,
        uid: `${first}.${last}${k % 3 === 0 ? '' : k}`,
      };
    });
    const value = (i: number, r: number): string =>
      attributeValues(rows[r]![SETTINGS.attributes[i]!.attribute as keyof (typeof rows)[0]])[0] ?? '';
    const roles = detectRoles(SETTINGS.attributes, value, rows.length);
    expect(roles.partOf[3]).toBe(1);
  });

  it("sends namesakes to review no more often than the model's threshold promises (one form in ten)", async () => {
    // The simulator's common surnames: many fresh people share a display name with an identity, and
    // each got a numbered login and address, as a namesake does.
    const { identities, accounts, planted } = simulatorRecords({ seed: 5 });
    const matcher = buildMatcher(SETTINGS);
    matcher.addBaseline(identities);
    const estimate = matcher.estimate(accounts);
    expect(estimate?.parameters).toBeDefined();
    const { duplicates } = matcher.match(accounts);
    const flagged = [...duplicates.keys()];
    const namesakes = flagged.filter((id) => !planted.has(id));
    expect(flagged.length).toBeGreaterThan(50);
    expect(namesakes.length / flagged.length).toBeLessThanOrEqual(0.1);
  });
});
