/**
 * The parts of a connector configuration that the end-to-end tests share: how the connector reaches
 * a simulator's tenant, and the unique login they generate.
 */
import type { RunningSimulator } from '../../src/simulator';

/** The tenant's API and client credentials, its fusion source's instance id, and the sources it aggregates. */
export function tenantConnection(sim: RunningSimulator): Record<string, unknown> {
  const fusion = sim.tenant.source(sim.tenant.meta.fusionSourceId!);
  return {
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    spConnectorInstanceId: fusion.connectorAttributes.spConnectorInstanceId,
    sources: ['Contractors', 'LDAP', 'Legacy'],
  };
}

/** First initial and last name, lower case, accents and spaces removed, unique across the tenant. */
export const LOGIN_DEFINITION = {
  name: 'login',
  expression: '$firstName.substring(0,1)$lastName',
  type: 'unique',
  case: 'lower',
  normalize: true,
  spaces: true,
};
