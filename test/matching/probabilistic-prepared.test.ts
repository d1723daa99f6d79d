/**
 * The probabilistic model's per-record shortcuts give the levels the per-pair comparison gives:
 * e-mail parts prepared once per record, and the surname under a name scored only when its level
 * needs the score.
 */
import { jaroWinkler } from '../../src/core/matching/algorithms/jaro-winkler';
import { type MatchRecord, buildMatcher, parseMatchingSettings, scoreValues } from '../../src/core/matching';
import { comparatorFor, emailLevel, emailParts } from '../../src/core/matching/probabilistic/comparators';
import { localFromNames, localNearNames, splitEmail } from '../../src/core/matching/probabilistic/local-part';
import { seededRandom } from '../../src/core/matching/probabilistic/estimate';

const GIVEN = ['anna', 'ben', 'carla', 'dirk', 'eva', 'j'];
const LAST = ['smith', 'smyth', 'okafor', 'moreau', 'smith-jones', 'tanaka'];
const DOMAINS = ['acme.com', 'acme.io', 'partner.org', ''];

/** The e-mail level as computed per pair before the parts were prepared per record (the oracle). */
function perPairEmailLevel(va: string, vb: string, score: number, namesA: string[], namesB: string[]): number {
  if (score < 0 || va === '' || vb === '') return -1;
  if (va === vb) return 0;
  const [la, da] = splitEmail(va);
  const [lb, db] = splitEmail(vb);
  // Another number of one local part, in any domain: someone else's by construction.
  if (la !== lb && la.replace(/[0-9]/g, '') === lb.replace(/[0-9]/g, '')) return 5;
  if (da !== '' && da === db) return 4;
  const derived = localFromNames(la, namesA) && localFromNames(lb, namesB);
  if (la === lb) return derived ? 2 : 1;
  const near = (local: string, names: string[]): boolean =>
    localFromNames(local, names) || localNearNames(local, names);
  if (jaroWinkler(la, lb) >= 0.9) return near(la, namesA) && near(lb, namesB) ? 2 : 3;
  return 8;
}

describe('probabilistic model: per-record shortcuts', () => {
  it('the e-mail level from prepared parts equals the per-pair comparison over random pairs', () => {
    const r = seededRandom(15);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const person = (): { names: string[]; email: string } => {
      const names = [pick(GIVEN), ...pick(LAST).split('-')];
      const first = names[0]!;
      const last = names[names.length - 1]!;
      const local = pick([
        `${first}.${last}`,
        `${first[0]}${last}`,
        `${first}.${last}${Math.floor(r() * 3)}`,
        'ops',
        first,
      ]);
      const domain = pick(DOMAINS);
      // A typo in the given name, not in the address: the local part is near the names, not from them.
      const typo = r() < 0.25 && first.length > 1;
      return {
        names: typo ? [`${first}${first.slice(-1)}`, ...names.slice(1)] : names,
        email: pick([domain === '' ? local : `${local}@${domain}`, '']),
      };
    };
    let compared = 0;
    let nearOnly = 0;
    for (let k = 0; k < 5000; k++) {
      const a = person();
      const same = r();
      const b =
        same < 0.3
          ? { names: a.names, email: a.email.replace(/@.*/, `@${pick(DOMAINS)}`) }
          : // A typo in the address, not in the names.
            same < 0.4
            ? { names: a.names, email: a.email.replace(/([a-z])(@.*)?$/, `$1$1@${pick(DOMAINS)}`) }
            : person();
      const score = a.email === '' || b.email === '' ? -1 : scoreValues('exact', a.email, b.email)!;
      const prepared = emailLevel(a.email, b.email, score, emailParts(a.email, a.names), emailParts(b.email, b.names));
      expect([a.email, b.email, prepared]).toEqual([
        a.email,
        b.email,
        perPairEmailLevel(a.email, b.email, score, a.names, b.names),
      ]);
      if (prepared > 0) compared++;
      const [pa, pb] = [emailParts(a.email, a.names), emailParts(b.email, b.names)];
      if (prepared === 2 && pa.local !== pb.local && !(pa.fromNames && pb.fromNames)) nearOnly++;
    }
    // The random pairs reach the levels below exact agreement, not only missing/exact, and similar
    // local parts near their names (the level a typo in a name no longer turns into evidence).
    expect(compared).toBeGreaterThan(1000);
    expect(nearOnly).toBeGreaterThan(10);
  });

  it('equal values are level 0 whatever their score, for every kind (the deferred surname relies on it)', () => {
    for (const kind of ['surname', 'name', 'identifier', 'birthdate', 'text', 'email']) {
      const rule = parseMatchingSettings({
        matching: { attributes: [{ attribute: 'x', algorithm: 'double-metaphone', threshold: 100, kind }] },
      }).attributes[0]!;
      const c = comparatorFor(rule);
      for (const v of ['smith', 'smith-jones', 'o', '1980-03-07', 'a@b.com']) {
        for (const score of [0, 42, 99, 100])
          expect([kind, v, score, c.level(v, v, score, [], [])]).toEqual([kind, v, score, 0]);
      }
    }
  });

  it('reported pairs carry the surname score though it is computed only when needed', () => {
    const settings = parseMatchingSettings({
      matching: {
        model: 'probabilistic',
        attributes: [
          { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
          { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
          { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100, kind: 'identifier' },
        ],
      },
    });
    const r = seededRandom(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const identities: MatchRecord[] = [];
    const accounts: MatchRecord[] = [];
    for (let i = 0; i < 300; i++) {
      const first = pick(GIVEN.slice(0, 5));
      const last = pick(LAST);
      const attributes = { displayName: `${first} ${last}`, lastName: last, employeeNumber: `E${i}` };
      identities.push({ id: `i${i}`, attributes });
      // Copies with the surname spelled otherwise (Smith/Smyth: equal by sound, not by value), or as is.
      const copy = i % 3 === 0 ? last.replace('smith', 'smyth') : last;
      if (i % 2 === 0) accounts.push({ id: `a${i}`, attributes: { ...attributes, lastName: copy } });
    }
    const m = buildMatcher(settings);
    m.addBaseline(identities);
    const result = m.match(accounts, { topK: 10 });
    const byId = new Map([...identities, ...accounts].map((rec) => [rec.id, rec.attributes]));
    let unequal = 0;
    for (const list of result.duplicates.values()) {
      for (const d of list) {
        const a = byId.get(d.accountId)!.lastName as string;
        const b = byId.get(d.candidateId)!.lastName as string;
        expect([d.accountId, d.candidateId, d.scores.lastName]).toEqual([
          d.accountId,
          d.candidateId,
          scoreValues('double-metaphone', a, b),
        ]);
        if (a !== b) unequal++;
      }
    }
    expect(result.duplicates.size).toBeGreaterThan(50);
    expect(unequal).toBeGreaterThan(0);
  });
});
