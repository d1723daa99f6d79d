import { type MatchRecord, type MatchingSettings, buildMatcher, parseMatchingSettings } from '../../src/core/matching';
import { planPartitions } from '../../src/core/matching/partition-plan';
import { MAIN_SETTINGS, NO_MANDATORY_SETTINGS, generate } from '../../bench/matching-data';
import { surnamePeople } from './support/surname-people';

/**
 * Every pair of new accounts the matcher finds as duplicates, as if every account joined the baseline
 * after its batch (the pairs a partitioned run must keep together, whatever its decisions).
 */
function duplicatePairs(
  settings: MatchingSettings,
  identities: MatchRecord[],
  accounts: MatchRecord[],
): [number, number][] {
  const number = new Map(accounts.map((a, i) => [a.id, i]));
  const matcher = buildMatcher(settings);
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

const lastName = (r: MatchRecord): string => JSON.stringify(r.attributes.lastName);

describe('partition plan: new accounts in partitions that keep every potential duplicate pair together', () => {
  it('sound-alike surnames (Smith, Smyth), two surnames, gaps and noise: no pair is split', () => {
    const people = surnamePeople(5, 600, 1200);
    // Every 10th account has a second surname: it joins the classes of both (a plan by one key would split its pairs).
    const [identities, accounts] = [
      people.slice(0, 600),
      people
        .slice(600)
        .map((r, i) =>
          i % 10 === 3 ? { ...r, attributes: { ...r.attributes, lastName: [r.attributes.lastName, 'Jones'] } } : r,
        ),
    ];
    const plan = planPartitions(MAIN_SETTINGS, accounts, 4, identities)!;
    expect(plan.attribute).toBe('lastName');
    const pairs = duplicatePairs(MAIN_SETTINGS, identities, accounts);
    // Pairs across different spellings, which only the phonetic keys join (a plan by the surname's
    // text would split them).
    const spelledApart = pairs.filter(([a, b]) => lastName(accounts[a]!) !== lastName(accounts[b]!));
    expect(spelledApart.length).toBeGreaterThan(20);
    expect(pairs.filter(([a, b]) => plan.partitionOf[a] !== plan.partitionOf[b])).toEqual([]);
    expect(plan.sizes.reduce((x, y) => x + y, 0)).toBe(accounts.length);
  });

  it("bench:matching's people: no pair split, and the partitions are even (many surname classes)", () => {
    const { identities, accounts } = generate(8, 3000, 3000);
    const plan = planPartitions(MAIN_SETTINGS, accounts, 4)!;
    const pairs = duplicatePairs(MAIN_SETTINGS, identities, accounts);
    expect(pairs.length).toBeGreaterThan(100);
    expect(pairs.filter(([a, b]) => plan.partitionOf[a] !== plan.partitionOf[b])).toEqual([]);
    expect(Math.max(...plan.sizes)).toBeLessThanOrEqual(Math.ceil((accounts.length / 4) * 1.1));
    expect(plan.largestClass).toBeLessThan(accounts.length / 4);
  });

  it('the probabilistic model with a mandatory surname: no duplicate pair split', () => {
    const settings = parseMatchingSettings({
      matching: {
        model: 'probabilistic',
        // Low, so that many pairs count: every one of them passed the mandatory surname all the same.
        probabilityThreshold: 0.001,
        attributes: [
          { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
          { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
          { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
        ],
      },
    });
    const { identities, accounts } = generate(9, 4000, 4000);
    const plan = planPartitions(settings, accounts, 3, identities)!;
    const pairs = duplicatePairs(settings, identities, accounts);
    expect(pairs.length).toBeGreaterThan(100);
    expect(pairs.filter(([a, b]) => plan.partitionOf[a] !== plan.partitionOf[b])).toEqual([]);
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
