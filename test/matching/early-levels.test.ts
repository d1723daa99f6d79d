/**
 * A full probabilistic run computes its blocked pairs' levels while its sources are still read, with
 * the roles the records held then give (early-levels.ts). The estimate uses them only when its own
 * roles, read from every record, are the same; either way the parameters are the one-call estimate's.
 */
import {
  type MatchRecord,
  type MatchingSettings,
  type ModelParameters,
  buildMatcher,
  parseMatchingSettings,
} from '../../src/core/matching';
import type { BlockedSlice } from '../../src/core/matching/blocked-slice';
import { buildMatchEngine } from '../../src/core/matching/matcher';
import { type EarlyLevels, joinLevels } from '../../src/core/matching/probabilistic/early-levels';
import { U_SAMPLE } from '../../src/core/matching/probabilistic/random-pairs';
import { RecordFeatures } from '../../src/core/matching/probabilistic/record-features';
import { drain } from '../../src/core/matching/steps';
import { generate } from '../../bench/matching-data';
import { PEOPLE_SETTINGS } from './support/people-settings';

const withoutClock = (p: ModelParameters | undefined): unknown => (p ? { ...p, estimatedAt: undefined } : p);

function oneCall(settings: MatchingSettings, identities: MatchRecord[], accounts: MatchRecord[]): unknown {
  const m = buildMatcher(settings);
  m.addBaseline(identities);
  return withoutClock(m.estimate(accounts)?.parameters);
}

/**
 * The feed's order of calls on the engine: the roles set once `first` accounts are held, the rest
 * appended, every account blocked in slices with its levels; then the estimate over the slices.
 */
function ahead(settings: MatchingSettings, identities: MatchRecord[], accounts: MatchRecord[], first: number) {
  const engine = buildMatchEngine(settings);
  engine.addBaseline(identities);
  const B = engine.appendNew(accounts.slice(0, first));
  drain(engine.rolesAhead());
  engine.appendMoreNew(accounts.slice(first));
  const slices: BlockedSlice[] = [];
  const chunks: (EarlyLevels | undefined)[] = [];
  for (let from = 0; from < accounts.length; from += 100) {
    const slice = engine.blockSlice(B, from, Math.min(accounts.length, from + 100));
    slices.push(slice);
    chunks.push(engine.levelsAhead(B, slice));
  }
  const early = joinLevels(chunks);
  const levels = jest.spyOn(RecordFeatures.prototype, 'pairLevels');
  const { stats } = drain(engine.finishSlices(B, accounts.length, slices, 0, true, undefined, early));
  const computedInEstimate = levels.mock.calls.length;
  levels.mockRestore();
  const parameters = withoutClock(engine.parameters());
  engine.dropNew(B);
  return { early, parameters, computedInEstimate, blockedPairs: stats.pairs.matched };
}

describe('blocked pairs levelled while the sources are read', () => {
  afterEach(() => jest.restoreAllMocks());

  it('the same roles at the estimate: only the random pairs are levelled then, and the parameters are the one-call estimate', () => {
    const { identities, accounts } = generate(21, 400, 800);
    const got = ahead(PEOPLE_SETTINGS, identities, accounts, 0);
    expect(got.early).toBeDefined();
    expect(got.blockedPairs).toBeGreaterThan(100);
    expect(got.early!.levels.length).toBe(got.blockedPairs * PEOPLE_SETTINGS.attributes.length);
    expect(got.computedInEstimate).toBe(U_SAMPLE);
    expect(got.parameters).toEqual(oneCall(PEOPLE_SETTINGS, identities, accounts));
  });

  it('domain aliases, which only every record shows, are applied to the levels computed ahead', () => {
    const { identities, accounts } = generate(23, 400, 700);
    // People of one domain again under a new one with the same local parts: the two domains are aliases.
    const renamed = identities
      .filter((r) => String(r.attributes.email).endsWith('@corp.example'))
      .map((r) => ({
        id: `renamed-${r.id}`,
        attributes: { ...r.attributes, email: String(r.attributes.email).replace('@corp.example', '@renamed.test') },
      }));
    expect(renamed.length).toBeGreaterThan(20);
    const all = [...accounts, ...renamed];
    const got = ahead(PEOPLE_SETTINGS, identities, all, 0);
    expect(got.computedInEstimate).toBe(U_SAMPLE);
    expect((got.parameters as ModelParameters).extra?.domainAliases).toEqual([['corp.example', 'renamed.test']]);
    expect(got.parameters).toEqual(oneCall(PEOPLE_SETTINGS, identities, all));
  });

  it('other roles at the estimate (a given name inside the display name only on the baseline): every pair levelled again, the same parameters', () => {
    const settings = parseMatchingSettings({
      matching: {
        model: 'probabilistic',
        attributes: [
          ...PEOPLE_SETTINGS.attributes,
          { attribute: 'givenName', algorithm: 'name-matcher', threshold: 80 },
        ],
      },
    });
    const data = generate(22, 400, 800);
    const given = (r: MatchRecord, inside: boolean): MatchRecord => {
      const display = String(r.attributes.displayName);
      return {
        ...r,
        attributes: { ...r.attributes, givenName: inside ? display.split(' ')[0]! : `${display.length % 7}zed` },
      };
    };
    // On the baseline the given name lies inside the display name (a part); on most records it does not.
    const identities = data.identities.map((r) => given(r, true));
    const accounts = data.accounts.map((r) => given(r, false));
    const got = ahead(settings, identities, accounts, 0);
    expect(got.early?.roles.partOf[3]).toBe(0);
    expect(got.computedInEstimate).toBe(U_SAMPLE + got.blockedPairs);
    expect(got.parameters).toEqual(oneCall(settings, identities, accounts));
    // Over every record the given name is an attribute of its own.
    const roles = (got.parameters as ModelParameters).extra?.roles as Record<string, { partOf?: string }>;
    expect(roles.givenName).toBeDefined();
    expect(roles.givenName!.partOf).toBeUndefined();
  });
});
