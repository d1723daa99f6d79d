/**
 * The probabilistic model on the attribute list an administrator writes (issue 26): attributes that
 * measure the same thing count once (found from the values, whatever their names), m is learned
 * without caps (an identifier that differs for a fifth of duplicates, an attribute with no evidence),
 * the prior stays honest at 1 % and at every account having a duplicate, numbered mailboxes are
 * evidence against in any domain, and attributes too common to make candidates do not.
 */
import { MIXED, hrSet } from '../../bench/quality-hr';
import {
  type MatchRecord,
  type ModelParameters,
  type PotentialDuplicate,
  buildExhaustiveMatcher,
  buildMatcher,
  parseMatchingSettings,
  scoreValues,
} from '../../src/core/matching';
import { comparatorFor } from '../../src/core/matching/probabilistic/comparators';
import { configurationWarnings } from '../../src/core/matching/probabilistic/diagnostics';

const ADMIN = [
  { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
  { attribute: 'firstName', algorithm: 'name-matcher', threshold: 80 },
  { attribute: 'lastName', algorithm: 'jaro-winkler', threshold: 85 },
  { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
  { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100 },
  { attribute: 'department', algorithm: 'exact', threshold: 100 },
];
const settings = (attributes: object[], extra: object = {}) =>
  parseMatchingSettings({ matching: { model: 'probabilistic', attributes, ...extra } });

const spec = (seed: number, duplicates: number) => ({
  name: 'hr',
  seed,
  identities: 1500,
  accounts: 900,
  duplicates,
  cultures: MIXED,
  email: 'first.last' as const,
  idDiffer: 0.2,
  deptChange: 0.25,
  namesakes: 0.2,
});

function run(set: { identities: MatchRecord[]; accounts: MatchRecord[] }, attributes: object[], extra: object = {}) {
  const m = buildMatcher(settings(attributes, extra));
  m.addBaseline(set.identities);
  const result = m.match(set.accounts, { topK: Infinity });
  return { result, parameters: m.parameters()! };
}

const level = (p: ModelParameters, attribute: string, name: string) =>
  p.attributes.find((a) => a.attribute === attribute)!.levels.find((l) => l.level === name)!;
const entry = (d: PotentialDuplicate, attribute: string) => d.explanation!.find((e) => e.attribute === attribute)!;

describe('attributes that measure the same thing count once', () => {
  const set = hrSet(spec(21, 0.4));
  // The same values under names that say nothing: the roles come from the values.
  const rename = (r: MatchRecord): MatchRecord => {
    const a = r.attributes;
    return {
      id: r.id,
      attributes: { a1: a.displayName, a2: a.firstName, a3: a.lastName, a4: a.email, a5: a.employeeNumber },
    };
  };
  const plain = { identities: set.identities.map(rename), accounts: set.accounts.map(rename) };
  const { result, parameters } = run(plain, [
    { attribute: 'a1', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'a2', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'a3', algorithm: 'jaro-winkler', threshold: 85 },
    { attribute: 'a4', algorithm: 'jaro-winkler', threshold: 90, kind: 'email' },
    { attribute: 'a5', algorithm: 'exact', threshold: 100 },
  ]);

  it('finds the given name and the surname inside the whole name from the values, not the attribute names', () => {
    expect(parameters.extra?.roles).toMatchObject({
      a1: { kind: 'name' },
      a2: { partOf: 'a1' },
      a3: { kind: 'surname', partOf: 'a1' },
    });
  });

  it('a pair whose names agree counts the name once: its parts weigh 0', () => {
    const all = [...result.duplicates.values()].flat();
    const exact = all.filter((d) => entry(d, 'a1').level === 'exact');
    expect(exact.length).toBeGreaterThan(50);
    for (const d of exact) {
      expect(entry(d, 'a2')).toMatchObject({ level: 'inside a1', weight: 0 });
      expect(entry(d, 'a3')).toMatchObject({ level: 'implied by the name', weight: 0 });
    }
  });

  it('the name alone gets no form although three attributes agree on it', () => {
    // A namesake: the same three name values, nothing else.
    const id = plain.identities.find((r) => typeof r.attributes.a4 === 'string')!;
    const twin = { id: 'twin', attributes: { a1: id.attributes.a1, a2: id.attributes.a2, a3: id.attributes.a3 } };
    const m = buildMatcher(
      settings(
        [
          { attribute: 'a1', algorithm: 'name-matcher', threshold: 80 },
          { attribute: 'a2', algorithm: 'name-matcher', threshold: 80 },
          { attribute: 'a3', algorithm: 'jaro-winkler', threshold: 85 },
          { attribute: 'a4', algorithm: 'jaro-winkler', threshold: 90, kind: 'email' },
          { attribute: 'a5', algorithm: 'exact', threshold: 100 },
        ],
        { probabilityThreshold: 0.01 },
      ),
      { parameters },
    );
    m.addBaseline(plain.identities);
    const d = m
      .match([twin], { topK: Infinity })
      .duplicates.get('twin')
      ?.find((x) => x.candidateId === id.id);
    expect(d).toBeDefined();
    // Name weight once (displayName), not three times: below 0.9 with nothing else.
    expect(d!.probability!).toBeLessThan(0.9);
    const nameWeights = ['a1', 'a2', 'a3'].map((a) => entry(d!, a).weight);
    expect(nameWeights.slice(1)).toEqual([0, 0]);
  });
});

describe('learned, not capped', () => {
  const set = hrSet(spec(22, 0.4));
  const { parameters } = run(set, [...ADMIN, { attribute: 'randomCode', algorithm: 'exact', threshold: 100 }]);

  it('an employee number that differs for a fifth of duplicates: m of "different" near what the data shows', () => {
    // About 0.2 of the duplicates holding a number have another one, from a contractor numbering (C12345).
    const other = level(parameters, 'employeeNumber', 'different, other format');
    expect(other.m).toBeGreaterThan(0.1);
    expect(other.m).toBeLessThan(0.35);
    // In this set only duplicates hold a number of another numbering: the data makes it evidence for.
    expect(Math.log2(other.m / other.u)).toBeGreaterThan(0);
    // Another number of the same numbering is someone else's: strong evidence against.
    const same = level(parameters, 'employeeNumber', 'different, same format');
    expect(Math.log2(same.m / same.u)).toBeLessThan(-3);
  });

  it('a changed department is weak evidence against, not a unique identifier mismatch', () => {
    const d = level(parameters, 'department', 'different, same format');
    expect(Math.log2(d.m / d.u)).toBeGreaterThan(-2.5);
  });

  it('an attribute of random values weighs near 0 and is reported as carrying no evidence', () => {
    // Every level a duplicate reaches (a level no pair reaches, R5 against C12 in another format,
    // has a weight that never applies).
    for (const l of parameters.attributes.find((a) => a.attribute === 'randomCode')!.levels) {
      if (l.m > 0.01) expect(Math.abs(Math.log2(l.m / l.u))).toBeLessThan(0.8);
    }
    const warnings = configurationWarnings(parameters).map((w) => `${w.kind} ${w.attribute ?? ''}`);
    expect(warnings).toContain('no-evidence randomCode');
    expect(warnings).toContain('weak-generator department');
    expect(warnings).not.toContain('no-evidence employeeNumber');
  });
});

describe('an honest prior', () => {
  it('at 1 % duplicates the prior is near 1 %', () => {
    const { parameters } = run(hrSet(spec(23, 0.01)), ADMIN);
    expect(parameters.prior).toBeGreaterThan(0.002);
    expect(parameters.prior).toBeLessThan(0.04);
  });

  it('when every account has a duplicate, a namesake with nothing against it does not pass beside the true match', () => {
    const set = hrSet(spec(24, 1));
    const { parameters } = run(set, ADMIN);
    expect(parameters.prior).toBeGreaterThan(0.85);
    expect(parameters.prior).toBeLessThan(1);
    // An account that copies an identity, and another identity with its name and nothing else.
    const source = set.identities.find((r) => r.attributes.email && r.attributes.employeeNumber)!;
    const namesake: MatchRecord = {
      id: 'namesake',
      attributes: {
        displayName: source.attributes.displayName,
        firstName: source.attributes.firstName,
        lastName: source.attributes.lastName,
      },
    };
    const m = buildMatcher(settings(ADMIN), { parameters });
    m.addBaseline([...set.identities, namesake]);
    const found = m.match([{ id: 'copy', attributes: { ...source.attributes } }], { topK: Infinity });
    const list = found.duplicates.get('copy')!;
    expect(list.map((d) => d.candidateId)).toEqual([source.id]);
    // Alone (the true match absent), the namesake's name weighs as much: it is the rival that holds it back.
    const alone = buildMatcher(settings(ADMIN, { probabilityThreshold: 0.01 }), { parameters });
    alone.addBaseline([...set.identities.filter((r) => r.id !== source.id), namesake]);
    const d = alone
      .match([{ id: 'copy', attributes: { ...source.attributes } }], { topK: Infinity })
      .duplicates.get('copy');
    expect(d?.find((x) => x.candidateId === 'namesake')).toBeDefined();
  });
});

describe('numbered mailboxes', () => {
  const email = comparatorFor(
    parseMatchingSettings({ matching: { attributes: [{ attribute: 'email', algorithm: 'exact', threshold: 100 }] } })
      .attributes[0]!,
  );
  const at = (a: string, b: string) => {
    const l = email.level(a, b, scoreValues('exact', a, b) ?? -1, ['john', 'smith'], ['john', 'smith']);
    return email.levels[l]!;
  };

  it('john.smith2 against john.smith is "another number" in the same domain and across domains; the same address is exact', () => {
    expect(at('john.smith2@acme.com', 'john.smith@acme.com')).toBe('same local part, other number');
    expect(at('john.smith2@partner.org', 'john.smith@acme.com')).toBe('same local part, other number');
    expect(at('j.q.smith3@acme.com', 'j.q.smith@acme.com')).toBe('same local part, other number');
    expect(at('john.smith2@acme.com', 'john.smith2@acme.com')).toBe('exact');
  });

  it('weighs against a pair, and a shared numbered address for it', () => {
    const set = hrSet(spec(25, 0.4));
    const { parameters } = run(set, ADMIN);
    const other = level(parameters, 'email', 'same local part, other number');
    expect(Math.log2(other.m / other.u)).toBeLessThan(-3);
    expect(parameters.extra?.assumed).toEqual([expect.stringContaining('same local part, other number')]);
    const exact = level(parameters, 'email', 'exact');
    expect(Math.log2(exact.m / exact.u)).toBeGreaterThan(5);
  });
});

describe('attributes too common to make candidates', () => {
  it('a department does not bring candidates on its own; index matcher and oracle still agree', () => {
    const set = hrSet({ ...spec(26, 0.4), identities: 600, accounts: 300 });
    const s = settings(ADMIN, { probabilityThreshold: 0.01 });
    const index = buildMatcher(s);
    const oracle = buildExhaustiveMatcher(s);
    index.addBaseline(set.identities);
    oracle.addBaseline(set.identities);
    const ri = index.match(set.accounts, { topK: Infinity });
    const ro = oracle.match(set.accounts, { topK: Infinity });
    const key = (r: typeof ri) =>
      [...r.duplicates.values()]
        .flat()
        .map((d) => `${d.accountId}|${d.candidateId}|${d.probability!.toFixed(9)}`)
        .sort();
    expect(key(ri)).toEqual(key(ro));
    expect(key(ri).length).toBeGreaterThan(50);
    // 20 departments over 900 records would bring about 45 candidates per account by themselves.
    expect(ri.stats.candidatesMean).toBeLessThan(15);
  });
});
