import {
  type MatchRecord,
  type MatchResult,
  type MatchingSettings,
  type ModelParameters,
  buildExhaustiveMatcher,
  buildMatcher,
  parseMatchingSettings,
  scoreValues,
} from '../../src/core/matching';
import { FusionError } from '../../src/core/errors';
import { comparatorFor } from '../../src/core/matching/probabilistic/comparators';
import { localFromNames } from '../../src/core/matching/probabilistic/local-part';
import { type CandidatePairs, estimateM, seededRandom } from '../../src/core/matching/probabilistic/estimate';
import { randomRecords } from './support/random-records';

function settings(matching: Record<string, unknown>): MatchingSettings {
  return parseMatchingSettings({ matching: { model: 'probabilistic', ...matching } });
}

const PEOPLE = settings({
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92 },
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
    { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100 },
  ],
});

const GIVEN = ['anna', 'ben', 'carla', 'dirk', 'eva', 'femi', 'gus', 'hana', 'ivo', 'jade', 'kofi', 'lena'];
const LAST = ['smith', 'okafor', 'lindqvist', 'moreau', 'tanaka', 'ivanova', 'brennan', 'haddad', 'novak', 'silva'];

/** A small organisation: identities, then accounts that are copies (some without e-mail) or new people. */
function organisation(seed: number): { identities: MatchRecord[]; accounts: MatchRecord[] } {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const person = (i: number): Record<string, string> => {
    const first = pick(GIVEN);
    const last = i % 3 === 0 ? 'smith' : pick(LAST) + (i % 7 === 0 ? '' : String.fromCharCode(97 + (i % 26)));
    return {
      displayName: `${first} ${last}`,
      lastName: last,
      email: `${first}.${last}${i}@acme.com`,
      employeeNumber: `E${1000 + i}`,
    };
  };
  const identities: MatchRecord[] = [];
  for (let i = 0; i < 400; i++) identities.push({ id: `i${i}`, attributes: person(i) });
  const accounts: MatchRecord[] = [];
  for (let a = 0; a < 200; a++) {
    if (a % 3 === 2) accounts.push({ id: `n${a}`, attributes: person(1000 + a) });
    else {
      const src = { ...identities[Math.floor(r() * identities.length)]!.attributes };
      if (a % 4 === 0) delete src.email;
      accounts.push({ id: `a${a}`, attributes: src });
    }
  }
  return { identities, accounts };
}

function run(s: MatchingSettings, parameters?: ModelParameters, exhaustive = false) {
  const { identities, accounts } = organisation(7);
  const m = exhaustive ? buildExhaustiveMatcher(s, { parameters }) : buildMatcher(s, { parameters });
  m.addBaseline(identities);
  const result = m.match(accounts, { topK: Infinity });
  return { result, params: m.parameters() };
}

let people: ReturnType<typeof run> | undefined;
/**
 * run(PEOPLE): the organisation matched with parameters its first match() estimates. The same
 * figures for every test that compares with it, so it is computed once per file (the tests only read
 * it); a test that proves something about estimating runs its own matcher.
 */
function estimatedPeople(): ReturnType<typeof run> {
  people ??= run(PEOPLE);
  return people;
}

function pairs(result: MatchResult): string[] {
  const out: string[] = [];
  for (const list of result.duplicates.values())
    for (const d of list) out.push(`${d.accountId}|${d.candidateId}|${d.probability!.toFixed(9)}|${d.score}`);
  return out.sort();
}

describe('probabilistic model: estimation', () => {
  it('EM recovers known m of synthetic candidate pairs (u given, one true match per account at most)', () => {
    const m = [
      [0.8, 0.15, 0.05],
      [0.7, 0.3],
    ];
    const u = [
      [0.01, 0.09, 0.9],
      [0.05, 0.95],
    ];
    const r = seededRandom(3);
    const draw = (p: number[]): number => {
      let x = r();
      for (let l = 0; l < p.length; l++) if ((x -= p[l]!) < 0) return l;
      return p.length - 1;
    };
    const levels: number[] = [];
    const pairsData: CandidatePairs = { attributes: 2, levels: new Int8Array(0), start: [0], before: [] };
    const accounts = 4000;
    for (let k = 0; k < accounts; k++) {
      const hasMatch = r() < 0.6;
      const K = 3;
      for (let c = 0; c < K; c++) {
        const src = hasMatch && c === 0 ? m : u;
        levels.push(draw(src[0]!), draw(src[1]!));
      }
      pairsData.start.push(pairsData.start.at(-1)! + K);
      // Few records before each account, so non-candidates hardly matter.
      pairsData.before.push(K);
    }
    pairsData.levels = Int8Array.from(levels);
    const est = estimateM(pairsData, u, [new Set(), new Set()]);
    est.m.forEach((row, i) => row.forEach((v, l) => expect(Math.abs(v - m[i]![l]!)).toBeLessThan(0.05)));
    expect(Math.abs(est.prior - 0.6)).toBeLessThan(0.05);
  });

  it('given parameters give the same results as the estimated ones (round trip through JSON)', () => {
    const first = estimatedPeople();
    expect(first.params).toBeDefined();
    const stored = JSON.parse(JSON.stringify(first.params)) as ModelParameters;
    const second = run(PEOPLE, stored);
    expect(second.params).toEqual(stored);
    expect(pairs(second.result)).toEqual(pairs(first.result));
    expect(pairs(first.result).length).toBeGreaterThan(50);
  });

  it('stored parameters are matched to the attributes by name: the same attributes in another order reuse them', () => {
    const first = estimatedPeople();
    const stored = JSON.parse(JSON.stringify(first.params)) as ModelParameters;
    const reordered = settings({ attributes: [...PEOPLE.attributes].reverse() });
    const second = run(reordered, stored);
    expect(second.params?.attributes.map((a) => a.attribute)).toEqual([
      'employeeNumber',
      'lastName',
      'email',
      'displayName',
    ]);
    expect(second.params?.attributes[0]).toEqual(stored.attributes[3]);
    expect(pairs(second.result)).toEqual(pairs(first.result));
  });

  it('estimate() of all accounts gives what the first match() of them estimates, matches nothing, and then matches with it', () => {
    const first = estimatedPeople();
    const { identities, accounts } = organisation(7);
    const m = buildMatcher(PEOPLE);
    m.addBaseline(identities);
    const est = m.estimate(accounts)!;
    const without = ({ estimatedAt: _, ...p }: ModelParameters) => p;
    expect(without(est.parameters)).toEqual(without(first.params!));
    expect(est.accounts).toBe(200);
    expect(est.candidatePairs).toBe(first.params!.extra!.candidatePairs);
    expect(est.candidatePairs).toBeGreaterThan(100);
    expect(m.parameters()).toBe(est.parameters);
    // Estimated once: a second call changes nothing; the records were not kept.
    expect(m.estimate(accounts)).toBeUndefined();
    expect(pairs(m.match(accounts, { topK: Infinity }))).toEqual(pairs(first.result));
  });

  it('estimate() does nothing with given parameters or the rules model; useParameters() switches to stored ones', () => {
    const { params } = estimatedPeople();
    const { identities, accounts } = organisation(7);
    expect(buildMatcher(PEOPLE, { parameters: params }).estimate(accounts)).toBeUndefined();
    expect(
      buildMatcher(parseMatchingSettings({ matching: { attributes: PEOPLE.attributes } })).estimate(accounts),
    ).toBeUndefined();
    const m = buildMatcher(PEOPLE);
    m.addBaseline(identities);
    m.estimate(accounts.slice(0, 1));
    m.useParameters(params!);
    expect(m.parameters()).toEqual(params);
    expect(pairs(m.match(accounts, { topK: Infinity }))).toEqual(pairs(estimatedPeople().result));
    expect(() => m.useParameters({ ...params!, prior: 2 })).toThrow(/re-estimate/);
  });

  it('rejects stored parameters that do not fit the configuration', () => {
    const { params } = estimatedPeople();
    const other = settings({ attributes: [{ attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 }] });
    expect(() => buildMatcher(other, { parameters: params })).toThrow(FusionError);
    expect(() => buildMatcher(other, { parameters: params })).toThrow(/re-estimate/);
  });

  it('rules model reports no parameters and no probability', () => {
    const rules = parseMatchingSettings({ matching: { attributes: PEOPLE.attributes } });
    const m = buildMatcher(rules);
    m.addBaseline(organisation(7).identities);
    const r = m.match(organisation(7).accounts);
    expect(m.parameters()).toBeUndefined();
    for (const list of r.duplicates.values()) for (const d of list) expect(d.probability).toBeUndefined();
  });
});

describe('probabilistic model: results', () => {
  const { result } = estimatedPeople();

  it('sets probability, match weight, one explanation entry per attribute and the prior, score = probability %', () => {
    const all = [...result.duplicates.values()].flat();
    expect(all.length).toBeGreaterThan(0);
    for (const d of all) {
      expect(d.probability).toBeGreaterThanOrEqual(0.9);
      expect(d.score).toBe(Math.round(d.probability! * 1000) / 10);
      expect(d.explanation!.map((e) => e.attribute)).toEqual([
        'displayName',
        'email',
        'lastName',
        'employeeNumber',
        'prior',
      ]);
    }
    for (const list of result.duplicates.values())
      for (let i = 1; i < list.length; i++)
        expect(list[i - 1]!.probability!).toBeGreaterThanOrEqual(list[i]!.probability!);
  });

  it('the explanation adds up: the prior is its own entry and the weights sum to the match weight', () => {
    const all = [...result.duplicates.values()].flat();
    for (const d of all) {
      const prior = d.explanation!.at(-1)!;
      expect(prior).toMatchObject({ attribute: 'prior', level: 'share of matches' });
      // Each of the accounts before this one is a priori an unlikely match: a negative start.
      expect(prior.weight).toBeLessThan(0);
      const sum = d.explanation!.reduce((t, e) => t + e.weight, 0);
      // Each weight and the total are rounded to 0.01.
      expect(Math.abs(sum - d.matchWeight!)).toBeLessThanOrEqual(0.005 * (d.explanation!.length + 1) + 1e-9);
    }
  });

  it('finds copies and opens no form for new people', () => {
    const found = [...result.duplicates.keys()];
    expect(found.filter((id) => id.startsWith('n'))).toEqual([]);
    // Copies with e-mail and employee number are found.
    expect(found.filter((id) => id.startsWith('a')).length).toBeGreaterThan(100);
  });

  it('a surname the full name holds on both sides counts once: "implied by the name", weight 0', () => {
    const all = [...result.duplicates.values()].flat();
    const surname = all.map((d) => d.explanation!.find((e) => e.attribute === 'lastName')!);
    expect(surname.some((e) => e.level === 'implied by the name')).toBe(true);
    for (const e of surname) {
      expect(e.level).not.toBe('exact');
      if (e.level === 'implied by the name') expect(e.weight).toBe(0);
    }
  });

  it('a surname alone does not make a candidate when a name attribute exists', () => {
    const s = settings({
      probabilityThreshold: 0.01,
      attributes: [
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 90 },
        { attribute: 'lastName', algorithm: 'exact', threshold: 100, kind: 'surname' },
      ],
    });
    const m = buildMatcher(s);
    m.addBaseline([{ id: 'i1', attributes: { displayName: 'Ann Smith', lastName: 'Smith' } }]);
    const r = m.match([{ id: 'a1', attributes: { displayName: 'Bob Smith', lastName: 'Smith' } }]);
    // The surname's index would have brought the pair; the name index at 90 does not.
    expect(r.stats.pairsCompared).toBe(0);
    expect(r.duplicates.size).toBe(0);
  });

  it('missing values are neutral: level "missing", weight 0', () => {
    const noEmail = [...result.duplicates.values()].flat().find((d) => d.explanation![1]!.level === 'missing');
    expect(noEmail).toBeDefined();
    expect(noEmail!.explanation![1]!.weight).toBe(0);
    expect(noEmail!.scores.email).toBeUndefined();
  });

  it('term frequency: agreeing on Smith weighs less than on a rare surname', () => {
    const all = [...result.duplicates.values()].flat();
    const weightOf = (pred: (d: (typeof all)[number]) => boolean): number =>
      Math.max(...all.filter(pred).map((d) => d.explanation!.find((e) => e.attribute === 'displayName')!.weight));
    const org = organisation(7);
    const byId = new Map([...org.identities, ...org.accounts].map((r) => [r.id, r]));
    const isSmith = (d: (typeof all)[number]): boolean => byId.get(d.candidateId)!.attributes.lastName === 'smith';
    const common = weightOf((d) => d.explanation![0]!.level === 'exact' && isSmith(d));
    const rare = weightOf((d) => d.explanation![0]!.level === 'exact' && !isSmith(d));
    expect(common).toBeDefined();
    expect(common).toBeLessThan(rare);
  });

  it('a namesake with another employee number and e-mail in the same domain falls below the threshold', () => {
    const { identities } = organisation(7);
    const twin = identities.find((i) => i.attributes.lastName !== 'smith')!;
    const estimated = estimatedPeople();
    expect(estimated.result.duplicates.size).toBeGreaterThan(0);
    const a = twin.attributes;
    const same = { id: 'same', attributes: { ...a } };
    const namesake = {
      id: 'namesake',
      attributes: { ...a, email: String(a.email).replace('@', '2@'), employeeNumber: 'E99999' },
    };
    const fixed = buildMatcher(PEOPLE, { parameters: estimated.params });
    fixed.addBaseline(identities);
    const r = fixed.match([same, namesake], { topK: Infinity });
    expect(r.duplicates.get('same')?.[0]?.candidateId).toBe(twin.id);
    expect(r.duplicates.get('namesake')?.some((d) => d.candidateId === twin.id) ?? false).toBe(false);
  });

  it('index matcher and exhaustive oracle agree (random records, low threshold)', () => {
    const s = settings({
      probabilityThreshold: 0.01,
      attributes: [
        { attribute: 'a', algorithm: 'name-matcher', threshold: 70 },
        { attribute: 'b', algorithm: 'jaro-winkler', threshold: 85 },
        { attribute: 'c', algorithm: 'exact', threshold: 100 },
      ],
    });
    const records = randomRecords(99, 300, ['a', 'b', 'c'], 'r');
    // A third of the new records copy an earlier one: duplicates for the model to find (random values
    // alone carry no evidence, and an honest model reports none of them).
    const fresh = records
      .slice(200)
      .map((r, i) => (i % 3 === 0 ? { id: r.id, attributes: { ...records[i * 2]!.attributes } } : r));
    const index = buildMatcher(s);
    const oracle = buildExhaustiveMatcher(s);
    index.addBaseline(records.slice(0, 200));
    oracle.addBaseline(records.slice(0, 200));
    const ri = index.match(fresh, { topK: Infinity });
    const ro = oracle.match(fresh, { topK: Infinity });
    expect(pairs(ri)).toEqual(pairs(ro));
    expect(pairs(ri).length).toBeGreaterThan(0);
    // Same estimate up to float summation order (candidates come in another order; u loses the
    // matches' expected share, which follows m).
    const flat = (p: ModelParameters | undefined): string[] =>
      p!.attributes.flatMap((a) =>
        a.levels.map((l) => `${a.attribute} ${l.level} ${l.m.toFixed(9)} ${l.u.toPrecision(12)}`),
      );
    expect(flat(index.parameters())).toEqual(flat(oracle.parameters()));
  });
});

describe('probabilistic comparators', () => {
  const rule = (kind: string, algorithm = 'jaro-winkler') =>
    parseMatchingSettings({ matching: { attributes: [{ attribute: 'x', algorithm, threshold: 90, kind }] } })
      .attributes[0]!;
  const level = (kind: string, a: string, b: string, names: [string[], string[]] = [[], []]): string => {
    const c = comparatorFor(rule(kind));
    const l = c.level(a, b, scoreValues('jaro-winkler', a, b) ?? -1, names[0], names[1]);
    return l < 0 ? 'missing' : c.levels[l]!;
  };

  it('nicknames from the public table: Mandy/Amanda, Shelly/Michelle', () => {
    expect(scoreValues('name-matcher', 'Mandy Jones', 'Amanda Jones')).toBeGreaterThanOrEqual(95);
    expect(scoreValues('name-matcher', 'Shelly Ortiz', 'Michelle Ortiz')).toBeGreaterThanOrEqual(95);
    expect(scoreValues('name-matcher', 'Shelly Ortiz', 'Amanda Ortiz')).toBeLessThan(80);
  });

  it('surnames per token: hyphenated and double-barrelled', () => {
    expect(level('surname', 'smith-jones', 'smith')).toBe('shares a token');
    expect(level('surname', 'garcia lopez', 'lopez')).toBe('shares a token');
    expect(level('surname', 'smith', 'jones')).toBe('different');
  });

  it('e-mail: local part and domain apart; local parts built from the names', () => {
    const names: [string[], string[]] = [
      ['john', 'smith'],
      ['john', 'smith'],
    ];
    expect(level('email', 'jo.k@acme.com', 'jo.k@new.io')).toBe('same local part, other domain');
    expect(level('email', 'john.smith@acme.com', 'john.smith@new.io', names)).toBe('local part from the names');
    expect(level('email', 'jane.doe@acme.com', 'john.smith@acme.com', names)).toBe('same domain, other local part');
    expect(level('email', 'x@a.com', 'y@b.com')).toBe('different');
    expect(localFromNames('jsmith', ['john', 'smith'])).toBe(true);
    expect(localFromNames('ops', ['john', 'smith'])).toBe(false);
  });

  it('identifiers: another number of the same numbering apart from a number of another numbering', () => {
    expect(level('identifier', '200123', '200123')).toBe('exact');
    expect(level('identifier', '200123', '200456')).toBe('different, same format');
    expect(level('identifier', 'e-0012', 'e-93')).toBe('different, same format');
    expect(level('identifier', '200123', 'c12345')).toBe('different, other format');
    expect(level('identifier', 'e-0012', '0012')).toBe('different, other format');
  });

  it('birth dates: swapped day/month or one wrong digit', () => {
    expect(level('birthdate', '1980-03-07', '1980-03-07')).toBe('exact');
    expect(level('birthdate', '1980-03-07', '1980-07-03')).toBe('day/month swapped or one digit');
    expect(level('birthdate', '1980-03-07', '1986-03-07')).toBe('day/month swapped or one digit');
    expect(level('birthdate', '1980-03-07', '1986-04-07')).toBe('different');
    expect(level('birthdate', '', '1986-04-07')).toBe('missing');
  });
});

describe('probabilistic settings', () => {
  it('reads a kind per attribute and rejects a bad one', () => {
    const s = parseMatchingSettings({
      matching: { attributes: [{ attribute: 'mail', algorithm: 'exact', threshold: 100, kind: 'email' }] },
    });
    expect(s.attributes[0]!.kind).toBe('email');
    expect(() =>
      parseMatchingSettings({
        matching: { attributes: [{ attribute: 'mail', algorithm: 'exact', threshold: 100, kind: 'phone' }] },
      }),
    ).toThrow(/matching.attributes\[0\].kind .* one of name, surname, email, birthdate, identifier, text/);
    expect(() =>
      parseMatchingSettings({
        matching: { attributes: [{ attribute: 'mail', algorithm: 'exact', threshold: 100, kind: 3 }] },
      }),
    ).toThrow(FusionError);
  });
});
