import {
  type MatchRecord,
  type MatchingSettings,
  buildExhaustiveMatcher,
  parseMatchingSettings,
} from '../../src/core/matching';
import { planPartitions } from '../../src/core/matching/partition-plan';
import { MAIN_SETTINGS, NO_MANDATORY_SETTINGS, generate } from '../../bench/matching-data';
import { surnamePeople } from './support/surname-people';

/**
 * Every pair of new accounts found as duplicates, as if every account joined the baseline after its
 * batch (the pairs a partitioned run must keep together, whatever its decisions). The exhaustive
 * matcher scores every pair: the indexes the plan shares its keys with choose nothing here, so a key
 * the plan (or a filter marked lossless) misses shows as a split pair.
 */
function duplicatePairs(
  settings: MatchingSettings,
  identities: MatchRecord[],
  accounts: MatchRecord[],
): [number, number][] {
  const number = new Map(accounts.map((a, i) => [a.id, i]));
  const matcher = buildExhaustiveMatcher(settings);
  matcher.addBaseline(identities);
  if (settings.model === 'probabilistic') matcher.estimate(accounts);
  const pairs: [number, number][] = [];
  for (let i = 0; i < accounts.length; i += 100) {
    const batch = accounts.slice(i, i + 100);
    for (const [id, found] of matcher.match(batch, { topK: Number.POSITIVE_INFINITY }).duplicates)
      for (const d of found) if (number.has(d.candidateId)) pairs.push([number.get(id)!, number.get(d.candidateId)!]);
    matcher.addBaseline(batch);
  }
  return pairs;
}

/** The pairs the plan puts in different partitions (none may be). */
function split(settings: MatchingSettings, identities: MatchRecord[], accounts: MatchRecord[], parts: number) {
  const plan = planPartitions(settings, accounts, parts, identities)!;
  const pairs = duplicatePairs(settings, identities, accounts);
  return { plan, pairs, split: pairs.filter(([a, b]) => plan.partitionOf[a] !== plan.partitionOf[b]) };
}

const lastName = (r: MatchRecord): string => JSON.stringify(r.attributes.lastName);

/** surnamePeople split in identities and accounts; every 10th account with a second surname. */
function people(seed: number, identities: number, accounts: number): [MatchRecord[], MatchRecord[]] {
  const all = surnamePeople(seed, identities, accounts);
  return [
    all.slice(0, identities),
    all
      .slice(identities)
      .map((r, i) =>
        i % 10 === 3 ? { ...r, attributes: { ...r.attributes, lastName: [r.attributes.lastName, 'Jones'] } } : r,
      ),
  ];
}

/** The surname alone, mandatory at `threshold`: every pair that passes it is a duplicate. */
const surnameAt = (threshold: number): MatchingSettings => ({
  attributes: [{ attribute: 'lastName', algorithm: 'double-metaphone', threshold, mandatory: true }],
  reviewTopK: 10,
});

/**
 * Sound-alikes that share a primary code (Smith, Smyth: 100), only a secondary one (Smith, Smit: 80),
 * or one's secondary as the other's primary (Smith's XMT is Schmidt's primary: 70).
 */
const SOUND_ALIKES = ['Smith', 'Schmidt', 'Smyth', 'Smit', 'Jones', 'Johns', 'Müller', 'Miller', 'Xu', ''];
const surnamed = (prefix: string, n: number): MatchRecord[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, attributes: { lastName: SOUND_ALIKES[(i * 7) % 10] } }));

describe('partition plan: new accounts in partitions that keep every potential duplicate pair together', () => {
  it('sound-alike surnames (Smith, Smyth), two surnames, gaps and noise: no pair is split', () => {
    const [identities, accounts] = people(5, 300, 600);
    const r = split(MAIN_SETTINGS, identities, accounts, 4);
    expect(r.plan.attribute).toBe('lastName');
    // Pairs across different spellings, which only the phonetic keys join (a plan by the surname's
    // text would split them).
    expect(r.pairs.filter(([a, b]) => lastName(accounts[a]!) !== lastName(accounts[b]!)).length).toBeGreaterThan(20);
    expect(r.split).toEqual([]);
  });

  // Below 100 a Double Metaphone pass may rest on a secondary code (Smith's XMT is Schmidt's primary).
  for (const [threshold, other] of [
    [80, 'Smit'],
    [70, 'Schmidt'],
  ] as const)
    it(`a surname mandatory at Double Metaphone ${threshold} (secondary codes pass): no pair is split`, () => {
      const [identities, accounts] = [surnamed('i', 60), surnamed('a', 120)];
      const r = split(surnameAt(threshold), identities, accounts, 4);
      // A pair that shares no primary code, which only the secondary keys join.
      const smith = accounts.findIndex((a) => a.attributes.lastName === 'Smith');
      const alike = accounts.findIndex((a) => a.attributes.lastName === other);
      expect(r.pairs).toContainEqual([Math.max(smith, alike), Math.min(smith, alike)]);
      expect(r.split).toEqual([]);
    });

  it('a mandatory exact attribute with several values and gaps: no pair is split', () => {
    const withId = (r: MatchRecord, i: number): MatchRecord => ({
      ...r,
      attributes: {
        ...r.attributes,
        employeeId: i % 11 === 0 ? undefined : i % 7 === 0 ? [`E${i % 97}`, `E${i % 89}`] : `E${i % 97}`,
      },
    });
    const [base, fresh] = people(7, 300, 600);
    const settings: MatchingSettings = {
      attributes: [
        { attribute: 'employeeId', algorithm: 'exact', threshold: 100, mandatory: true },
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 50, mandatory: false },
      ],
      reviewTopK: 10,
    };
    const r = split(settings, base.map(withId), fresh.map(withId), 4);
    expect(r.plan.attribute).toBe('employeeId');
    expect(r.pairs.length).toBeGreaterThan(100);
    expect(r.split).toEqual([]);
  });

  it("bench:matching's people: no pair split, and the partitions are even (many surname classes)", () => {
    const { identities, accounts } = generate(8, 1500, 1500);
    const r = split(MAIN_SETTINGS, identities, accounts, 4);
    expect(r.pairs.length).toBeGreaterThan(50);
    expect(r.split).toEqual([]);
    expect(Math.max(...r.plan.sizes)).toBeLessThanOrEqual(Math.ceil((accounts.length / 4) * 1.1));
    expect(r.plan.largestClass).toBeLessThan(accounts.length / 4);
  });

  it('the probabilistic model, a mandatory surname or a mandatory e-mail (its local part): no duplicate pair split', () => {
    const settings = (mandatory: string) =>
      parseMatchingSettings({
        matching: {
          model: 'probabilistic',
          // Low, so that many pairs count: every one of them passed the mandatory attribute all the same.
          probabilityThreshold: 0.001,
          attributes: [
            {
              attribute: 'lastName',
              algorithm: 'double-metaphone',
              threshold: 100,
              mandatory: mandatory === 'lastName',
            },
            { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
            { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: mandatory === 'email' },
          ],
        },
      });
    const { identities, accounts } = generate(9, 1500, 1500);
    for (const mandatory of ['lastName', 'email']) {
      const r = split(settings(mandatory), identities, accounts, 3);
      expect(r.plan.attribute).toBe(mandatory);
      expect(r.pairs.length).toBeGreaterThan(20);
      expect(r.split).toEqual([]);
    }
  });

  it('classes are weighed by the pairs they will have: a surname common in the baseline gets a partition of its own', () => {
    const person = (id: string, last: string): MatchRecord => ({
      id,
      attributes: { lastName: last, displayName: `Anna ${last}` },
    });
    const identities = Array.from({ length: 1000 }, (_, i) => person(`i${i}`, 'Nguyen'));
    const others = ['Abbott', 'Baker', 'Carter', 'Dalton', 'Fisher', 'Gordon', 'Harper', 'Jensen', 'Keller', 'Lopez'];
    const accounts = [
      ...Array.from({ length: 5 }, (_, i) => person(`n${i}`, 'Nguyen')),
      ...others.flatMap((last, i) => [person(`a${i}`, last), person(`b${i}`, last)]),
    ];
    const plan = planPartitions(MAIN_SETTINGS, accounts, 2, identities)!;
    // 5 accounts against 1,000 namesakes outweigh 20 accounts of surnames with no one to compare.
    const nguyen = plan.partitionOf[0]!;
    expect(accounts.filter((_, i) => plan.partitionOf[i] === nguyen).map((a) => a.attributes.lastName)).toEqual(
      Array(5).fill('Nguyen'),
    );
    expect([...plan.sizes].sort((x, y) => x - y)).toEqual([5, 20]);
    expect(plan.largestClass).toBe(5);
  });

  it('hundreds of thousands of classes (a mandatory exact identifier) are planned', () => {
    const accounts = Array.from({ length: 300_000 }, (_, i) => ({ id: `a${i}`, attributes: { employeeId: `E${i}` } }));
    const settings: MatchingSettings = {
      attributes: [{ attribute: 'employeeId', algorithm: 'exact', threshold: 100, mandatory: true }],
      reviewTopK: 10,
    };
    const plan = planPartitions(settings, accounts, 8)!;
    expect(plan.largestClass).toBe(1);
    expect(plan.sizes).toEqual(Array(8).fill(300_000 / 8));
  });

  it('no plan without a mandatory attribute with lossless keys (fuzzy indexes chain people together)', () => {
    const { accounts } = generate(3, 50, 50);
    expect(planPartitions(NO_MANDATORY_SETTINGS, accounts, 4)).toBeUndefined();
    const fuzzySurname: MatchingSettings = {
      attributes: [{ attribute: 'lastName', algorithm: 'jaro-winkler', threshold: 90, mandatory: true }],
      reviewTopK: 10,
    };
    expect(planPartitions(fuzzySurname, accounts, 4)).toBeUndefined();
  });

  it('one partition holds everything; a bad count is a clear error', () => {
    const { accounts } = generate(4, 200, 200);
    const one = planPartitions(MAIN_SETTINGS, accounts, 1)!;
    expect(one.sizes).toEqual([200]);
    expect(new Set(one.partitionOf)).toEqual(new Set([0]));
    for (const bad of [0, -2, 1.5, Number.NaN])
      expect(() => planPartitions(MAIN_SETTINGS, accounts, bad)).toThrow(/partitions must be a whole number >= 1/);
  });
});
