/**
 * A simulator tenant as matching input: its identities, the accounts of its managed sources, and the
 * ids of the accounts the generator planted as duplicates (3,000 identities, 10 % planted, no
 * machine accounts unless the spec says otherwise).
 */
import { type MatchRecord, parseMatchingSettings } from '../../../src/core/matching';
import { type TenantSpec, generateTenant } from '../../../src/simulator/tenant-generator';

/** The aggregation benches' list (surname, display name, e-mail, login; no mandatory attribute), probabilistic. */
export const SIMULATOR_LIST = parseMatchingSettings({
  matching: {
    model: 'probabilistic',
    attributes: [
      { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100 },
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
      { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
      { attribute: 'uid', algorithm: 'levenshtein', threshold: 80 },
    ],
  },
});

export interface SimulatorRecords {
  identities: MatchRecord[];
  accounts: MatchRecord[];
  planted: Set<string>;
}

export function simulatorRecords(spec: Partial<TenantSpec>): SimulatorRecords {
  const tenant = generateTenant({
    identities: 3000,
    accountsPerSource: 1500,
    duplicateRate: 0.1,
    machineRate: 0,
    disabledSource: false,
    ...spec,
  });
  const record = (r: { id: string; attributes: Record<string, unknown> }): MatchRecord => ({
    id: r.id,
    attributes: r.attributes,
  });
  const managed = new Set(tenant.meta.managedSourceIds);
  return {
    identities: [...tenant.identities.values()].map(record),
    accounts: [...tenant.accounts.values()].filter((a) => managed.has(a.sourceId)).map(record),
    planted: new Set(tenant.groundTruth.map((t) => t.accountId)),
  };
}
