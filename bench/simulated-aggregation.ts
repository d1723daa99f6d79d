/**
 * The std:account:list the aggregation benches run against the simulator's tenants: its matching
 * rules (the simulator's attributes) and its configuration, so the memory and scale-out benches
 * measure the same aggregation.
 */
import type { MatchingSettings } from '../src/core/matching/types';
import { silentLogger } from '../src/core/ports/logger';
import type { PlatformFactory } from '../src/core/ports/platform';
import type { SimulatorInfo } from './harness';

export const SIMULATOR_MATCHING: MatchingSettings['attributes'] = [
  { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
  { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
  { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
  { attribute: 'uid', algorithm: 'levenshtein', threshold: 80, mandatory: false },
];

/**
 * Lists an administrator may write instead of the benches' own (bench:scale-out's SCALE_AGG_LIST): one
 * partitioned by e-mail (exact, mandatory) rather than surname codes, and a careless one (first name,
 * surname, e-mail, all Jaro-Winkler 85, nothing mandatory: no partition plan exists for it).
 */
export const OTHER_MATCHING_LISTS: Record<string, MatchingSettings['attributes']> = {
  'mail-first': [
    { attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: false },
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: false },
  ],
  careless: ['firstName', 'lastName', 'email'].map((attribute) => ({
    attribute,
    algorithm: 'jaro-winkler',
    threshold: 85,
    mandatory: false,
  })),
};

/** The fusion source's configuration over `base` (platform connection and its limits). */
export function aggregationConfig<B extends object>(
  base: B,
  spConnectorInstanceId: unknown,
  model: string,
  attributes: MatchingSettings['attributes'] = SIMULATOR_MATCHING,
): B & Record<string, unknown> {
  return {
    ...base,
    spConnectorInstanceId,
    batchSize: 250,
    maxAttempts: 1000,
    attributeDefinitions: [
      { name: 'login', expression: '$uid', type: 'unique', case: 'lower', normalize: true, spaces: true },
      { name: 'employeeId', expression: 'F$counter', type: 'counter', digits: 7 },
    ],
    // Nearly every account goes to review on the simulator's names: these benches measure the run,
    // not the review-flood guard (which would stop it).
    matching: { model, attributes, maxReviewShare: 1 },
  };
}

/** Where a simulator answers and its fusion source (bench/harness.ts's SimulatorInfo has more). */
type SimulatorAddress = Pick<SimulatorInfo, 'baseurl' | 'clientId' | 'clientSecret' | 'fusionSourceId'>;

/** The platform connection of every aggregation bench: the simulator's two managed sources, no limit (BENCH_RPS). */
export function simulatorConnection(info: SimulatorAddress) {
  return {
    baseurl: info.baseurl,
    clientId: info.clientId,
    clientSecret: info.clientSecret,
    sources: ['Contractors', 'LDAP'],
    // BENCH_RPS: the connector's own rate, as a tenant's (its default is 10); unset, no limit to wait on.
    requestsPerSecond: Number(process.env.BENCH_RPS ?? 1000),
    maxConcurrentRequests: 20,
  };
}

/** The fusion source's connector instance id, read from the platform as a run would. */
export async function fusionInstanceId(
  factory: PlatformFactory,
  base: Record<string, unknown>,
  info: SimulatorAddress,
): Promise<unknown> {
  const probe = factory(base, { signal: new AbortController().signal, logger: silentLogger });
  try {
    return (await probe.getSource(info.fusionSourceId)).connectorAttributes.spConnectorInstanceId;
  } finally {
    probe.close();
  }
}
