/**
 * bench:quality's simulator sets: the tenants bench:scale-out and the aggregation benches run (two
 * managed sources of fresh people and 10 % planted duplicates), as a labelled set, scored with the
 * attribute list those benches use: surname, display name, e-mail and login, the list an
 * administrator naturally writes. Their logins are built from the names and numbered where a
 * namesake held the name first (isabella.kelathson1), a case the HR-like sets (no login) do not
 * have. `common` surnames (150) make many fresh people namesakes of an identity; `varied` ones
 * (5,616) few.
 */
import type { MatchRecord } from '../src/core/matching';
import { generateTenant } from '../src/simulator/tenant-generator';
import type { Labelled } from './quality-data';
import { SIMULATOR_MATCHING } from './simulated-aggregation';

/**
 * A careless list: first name, surname and e-mail, all Jaro-Winkler 85, no display name and no
 * kinds. Without a name attribute the model once read firstName as a login and every address as
 * evidence of its own (form precision 0.118 on sim-varied).
 */
export const FIRST_LAST_EMAIL = {
  model: 'probabilistic',
  attributes: ['firstName', 'lastName', 'email'].map((attribute) => ({
    attribute,
    algorithm: 'jaro-winkler',
    threshold: 85,
  })),
};

/** The simulator tenant's list under the probabilistic model, as rules, and a careless list. */
export const SIMULATOR_LISTS: Array<[string, Record<string, unknown>]> = [
  ['simulator', { model: 'probabilistic', attributes: SIMULATOR_MATCHING }],
  ['rules', { attributes: SIMULATOR_MATCHING }],
  ['first/last/mail', FIRST_LAST_EMAIL],
];

const key = (v: unknown): string => String(v ?? '').toLowerCase();

export function simulatorSet(surnames: 'common' | 'varied', identities: number, seed = 11): Labelled {
  const tenant = generateTenant({
    seed,
    surnames,
    identities,
    accountsPerSource: Math.ceil(identities / 2),
    duplicateRate: 0.1,
    machineRate: 0,
    disabledSource: false,
  });
  const record = (r: { id: string; attributes: Record<string, unknown> }): MatchRecord => ({
    id: r.id,
    attributes: r.attributes,
  });
  const ids = [...tenant.identities.values()].map(record);
  const person = new Map<string, string>(ids.map((r) => [r.id, r.id]));
  const names = new Set(ids.map((r) => key(r.attributes.displayName)));
  const planted = new Map(tenant.groundTruth.map((t) => [t.accountId, t]));
  const managed = new Set(tenant.meta.managedSourceIds);
  const accounts: MatchRecord[] = [];
  const kind = new Map<string, string>();
  for (const a of tenant.accounts.values()) {
    if (!managed.has(a.sourceId)) continue;
    accounts.push(record(a));
    const t = planted.get(a.id);
    // A copy of another source's account is that account's person (it comes earlier in the run).
    person.set(a.id, t ? (person.get(t.candidateId) ?? t.candidateId) : a.id);
    kind.set(a.id, t ? t.variation : names.has(key(a.attributes.displayName)) ? 'namesake' : 'new');
  }
  return { name: `sim-${surnames}`, identities: ids, accounts, person, kind };
}
