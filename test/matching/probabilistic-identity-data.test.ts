/**
 * Where identity data breaks the textbook model's assumptions: a surname change counted once (not by
 * the name, the surname and the address built from them), addresses moved to an alias domain,
 * identifiers shared by one person's several records, and the one-to-one prior.
 */
import {
  type MatchRecord,
  type PotentialDuplicate,
  buildMatcher,
  parseMatchingSettings,
} from '../../src/core/matching';
import { comparatorFor } from '../../src/core/matching/probabilistic/comparators';
import {
  ALIAS_MIN_SHARED,
  aliasPairsFrom,
  findDomainAliases,
} from '../../src/core/matching/probabilistic/domain-aliases';
import { seededRandom } from '../../src/core/matching/probabilistic/estimate';

const MATCHING = {
  model: 'probabilistic',
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
    { attribute: 'email', algorithm: 'exact', threshold: 100, kind: 'email' },
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
    { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100, kind: 'identifier' },
  ],
};
const SETTINGS = parseMatchingSettings({ matching: MATCHING });

const GIVEN = `anna ben carla dirk eva femi gus hana ivo jade kofi lena maya nils olga pavel quinn rosa sami tara
  uwe vera wim xena yusuf zoe abel bruna cyril dora emil flora goran hilde igor jana karl lotte milan nora`.split(
  /\s+/,
);
const LAST = ['okafor', 'lindqvist', 'moreau', 'tanaka', 'ivanova', 'brennan', 'haddad', 'novak', 'silva', 'kowalski'];

interface Person {
  first: string;
  last: string;
  local: string;
  employee: string;
}

/**
 * An organisation of 600 people (unique local parts, name-built), then accounts: copies, copies at
 * the new domain acme-group.com (the organisation's alias), new people. Returns the people too.
 */
function organisation(seed: number): { people: Person[]; identities: MatchRecord[]; accounts: MatchRecord[] } {
  const r = seededRandom(seed);
  const used = new Map<string, number>();
  const newPerson = (i: number): Person => {
    const first = GIVEN[Math.floor(r() * GIVEN.length)]!;
    const last = LAST[Math.floor(r() * LAST.length)]! + String.fromCharCode(97 + Math.floor(r() * 26));
    const base = `${first}.${last}`;
    const n = (used.get(base) ?? 0) + 1;
    used.set(base, n);
    return { first, last, local: n > 1 ? `${base}${n}` : base, employee: `E${10000 + i}` };
  };
  const record = (id: string, p: Person, domain = 'acme.com', employee = true): MatchRecord => ({
    id,
    attributes: {
      displayName: `${p.first} ${p.last}`,
      lastName: p.last,
      email: `${p.local}@${domain}`,
      ...(employee ? { employeeNumber: p.employee } : {}),
    },
  });
  const people: Person[] = [];
  const identities: MatchRecord[] = [];
  for (let i = 0; i < 600; i++) {
    const p = newPerson(i);
    people.push(p);
    identities.push(record(`i${i}`, p));
  }
  const accounts: MatchRecord[] = [];
  for (let a = 0; a < 300; a++) {
    const p = people[(a * 7) % people.length]!;
    if (a % 3 === 0) accounts.push(record(`n${a}`, newPerson(1000 + a)));
    else if (a % 3 === 1) accounts.push(record(`a${a}`, p, 'acme-group.com', false));
    else if (a % 10 === 5) {
      // Married: another surname and an address from the new name, the same employee number.
      const last = `${LAST[a % LAST.length]!}z`;
      accounts.push(record(`m${a}`, { ...p, last, local: `${p.first}.${last}` }));
    } else accounts.push(record(`c${a}`, p, 'acme.com', a % 2 === 0));
  }
  return { people, identities, accounts };
}

function estimated(seed: number) {
  const org = organisation(seed);
  const m = buildMatcher(SETTINGS);
  m.addBaseline(org.identities);
  const result = m.match(org.accounts, { topK: Infinity });
  return { ...org, parameters: m.parameters()!, result };
}

/** A matcher with the parameters estimated on organisation(seed), over its identities. */
function fixedMatcher(seed: number) {
  const org = estimated(seed);
  const m = buildMatcher(SETTINGS, { parameters: org.parameters });
  m.addBaseline(org.identities);
  return { ...org, m };
}

const entry = (d: PotentialDuplicate, attribute: string) => d.explanation!.find((e) => e.attribute === attribute)!;

describe('full names: a changed surname under the same given name', () => {
  const c = comparatorFor(SETTINGS.attributes[0]!);
  const level = (a: string, b: string, score: number): string => c.levels[c.level(a, b, score, [], [])]!;

  it('is its own level, for the same given name or a nickname of it, and only for another surname', () => {
    expect(level('jane doe', 'jane smith', 40)).toBe('same given name, other surname');
    expect(level('bill smith', 'william jones', 40)).toBe('same given name, other surname');
    // A typo in the surname is a fuzzy band, another given name is different, one token is no full name.
    expect(level('jane lindqvist', 'jane lindqvst', 85)).toBe('fuzzy >= 80');
    expect(level('jane doe', 'john smith', 30)).toBe('different');
    expect(level('smith', 'jones', 30)).toBe('different');
    expect(level('jane doe', 'jane doe', 100)).toBe('exact');
  });

  it('the same employee number with a changed surname and an address from the new name opens a form', () => {
    const { people, identities, m } = fixedMatcher(3);
    const p = people[5]!;
    const moved = {
      id: 'married',
      attributes: {
        displayName: `${p.first} haddadz`,
        lastName: 'haddadz',
        email: `${p.first}.haddadz@acme.com`,
        employeeNumber: p.employee,
      },
    };
    const r = m.match([moved], { topK: Infinity });
    const d = r.duplicates.get('married')?.[0];
    expect(d?.candidateId).toBe(identities[5]!.id);
    expect(d!.probability).toBeGreaterThanOrEqual(0.9);
    expect(entry(d!, 'displayName').level).toBe('same given name, other surname');
    // The surname and the address changed with the name: counted once, by the name.
    expect(entry(d!, 'lastName')).toMatchObject({ level: 'implied by the name', weight: 0 });
    expect(entry(d!, 'email')).toMatchObject({ level: 'local parts from other names', weight: 0 });
  });

  it('someone else with the same given name, another surname and another employee number gets no form', () => {
    const { people, m } = fixedMatcher(3);
    const p = people[5]!;
    const other = {
      id: 'other',
      attributes: {
        displayName: `${p.first} haddadz`,
        lastName: 'haddadz',
        email: `${p.first}.haddadz@acme.com`,
        employeeNumber: 'E99999',
      },
    };
    expect(m.match([other], { topK: Infinity }).duplicates.has('other')).toBe(false);
  });
});

describe('domain aliases', () => {
  const at = (domain: string, locals: string[]): string[] => locals.map((l) => `${l}@${domain}`);
  // Local parts of letters only (p.ab, p.ac, ...): a number would make them one name's family (p.1, p.2).
  const word = (i: number): string => String.fromCharCode(97 + Math.floor(i / 26)) + String.fromCharCode(97 + (i % 26));
  const locals = (n: number, prefix = 'p', from = 0): string[] =>
    Array.from({ length: n }, (_, i) => `${prefix}.${word(from + i)}`);

  it('two domains whose local parts nearly all coincide are aliases; a few coincidences are namesakes', () => {
    const addresses = [
      ...at('acme.com', locals(100)),
      // Nine in ten of the new domain's local parts are at acme.com: an alias.
      ...at('acme-group.com', [...locals(18), ...locals(2, 'q')]),
      // Two of forty at a partner: namesakes.
      ...at('partner.org', [...locals(2), ...locals(38, 'r')]),
    ];
    expect(findDomainAliases(addresses)).toEqual([['acme-group.com', 'acme.com']]);
  });

  it('a subsidiary that also gives its own people addresses is no alias, nor are common local parts (jchen beside jchen2)', () => {
    const own = [
      ...at('acme.com', locals(100)),
      // Half moved from acme.com, half its own people: a namesake there gets the same local part.
      ...at('labs.acme.com', [...locals(10), ...locals(10, 'q')]),
    ];
    expect(findDomainAliases(own)).toEqual([]);
    const common = [
      'jchen',
      'jchen2',
      'jchen3',
      'wli',
      'wli2',
      'hwang',
      'hwang2',
      'yzhang',
      'yzhang2',
      'xliu',
      'xliu2',
    ];
    const coincidence = [
      ...at('acme.com', [...common, ...locals(50)]),
      // Every one of these is at acme.com too, but each is a name many hold: no evidence of one mailbox.
      ...at('labs.acme.com', ['jchen', 'wli', 'hwang', 'yzhang', 'xliu', 'jchen2', ...locals(3, 'q')]),
    ];
    expect(findDomainAliases(coincidence)).toEqual([]);
  });

  it(`needs ${ALIAS_MIN_SHARED} shared local parts, and ignores a local part found at many domains (info@)`, () => {
    expect(findDomainAliases([...at('a.com', locals(ALIAS_MIN_SHARED - 1)), ...at('b.com', locals(4))])).toEqual([]);
    const many = Array.from({ length: 10 }, (_, i) => `info@d${i}.com`);
    expect(findDomainAliases([...many, ...many])).toEqual([]);
  });

  it('stored aliases that are malformed are dropped', () => {
    expect(aliasPairsFrom([['a.com', 'b.com'], ['x'], 'y', ['', 'b.com'], [1, 2]])).toEqual([['a.com', 'b.com']]);
    expect(aliasPairsFrom(undefined)).toEqual([]);
  });

  it('are estimated from the data and stored with the parameters; one local part there is the same mailbox', () => {
    const { parameters, result, identities } = estimated(3);
    expect(parameters.extra?.domainAliases).toEqual([['acme-group.com', 'acme.com']]);
    const moved = result.duplicates.get('a1')?.[0];
    expect(moved?.candidateId).toBe(identities[7]!.id);
    expect(entry(moved!, 'email').level).toBe('same local part, alias domain');
    expect(entry(moved!, 'email').weight).toBeGreaterThan(5);
    // Reused from the stored parameters by a matcher that estimates nothing.
    const { m } = fixedMatcher(3);
    const r = m.match(
      [
        {
          id: 'moved',
          attributes: {
            displayName: identities[9]!.attributes.displayName,
            lastName: identities[9]!.attributes.lastName,
            email: String(identities[9]!.attributes.email).replace('acme.com', 'acme-group.com'),
          },
        },
      ],
      { topK: Infinity },
    );
    expect(entry(r.duplicates.get('moved')![0]!, 'email').level).toBe('same local part, alias domain');
  });

  it('the same local part at a domain that is no alias stays the names evidence (weight 0)', () => {
    const { identities, parameters } = estimated(3);
    // Every blocked pair reported, to see the level whatever the probability.
    const all = buildMatcher(parseMatchingSettings({ matching: { ...MATCHING, probabilityThreshold: 1e-9 } }), {
      parameters,
    });
    all.addBaseline(identities);
    const a = identities[9]!.attributes;
    const r = all.match([
      { id: 'elsewhere', attributes: { ...a, email: String(a.email).replace('acme.com', 'partner.org') } },
    ]);
    const d = r.duplicates.get('elsewhere')!.find((x) => x.candidateId === identities[9]!.id)!;
    expect(entry(d, 'email')).toMatchObject({ level: 'local part from the names', weight: 0 });
  });
});

describe('identifiers and the prior', () => {
  it("an employee number held by one person's three records weighs as much as one held by two", () => {
    const { identities, m } = fixedMatcher(3);
    const a = identities[11]!.attributes;
    const copy = (id: string): MatchRecord => ({ id, attributes: { ...a, email: undefined } });
    const weight = (r: ReturnType<typeof m.match>, id: string): number =>
      entry(
        r.duplicates.get(id)!.find((d) => d.candidateId === identities[11]!.id)!,
        'employeeNumber',
      ).weight;
    const alone = weight(m.match([copy('only')], { topK: Infinity }), 'only');
    const twice = weight(m.match([copy('first'), copy('second')], { topK: Infinity }), 'second');
    expect(alone).toBeGreaterThan(5);
    expect(twice).toBe(alone);
  });

  it('the prior entry is log2(λ / (1 − prior)) with λ the prior spread over the records before the account', () => {
    const { parameters, result } = estimated(3);
    const d = result.duplicates.get('c2')![0]!;
    const before = 600 + 2; // c2 is the third account, after the identities
    const lambda = parameters.prior / before;
    expect(entry(d, 'prior').weight).toBeCloseTo(Math.log2(lambda / (1 - parameters.prior)), 2);
  });
});
