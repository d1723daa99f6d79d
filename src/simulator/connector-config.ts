import type { Tenant } from './store';

export interface ConnectorConfigOptions {
  /** The simulator's URL: the connector's Platform API URL. */
  baseurl: string;
  clientId: string;
  clientSecret: string;
  /** Proxy mode: the proxy server's URL and password. */
  proxyUrl?: string;
  proxyPassword?: string;
  /** "Requests per second" suited to the simulator's rate limit. */
  requestsPerSecond?: number;
}

/**
 * A complete, working connector configuration for the simulated tenant, as an operator would
 * enter it on the connector's source: credentials, the connector instance id the platform set,
 * every managed source, unique login and employee number, matching on name and department.
 * `fusion-proxy simulator --write-config` writes it; the demo and the simulator's platform role
 * send it with every command, as the platform sends the source's configuration.
 */
export function connectorConfig(tenant: Tenant, opts: ConnectorConfigOptions): Record<string, unknown> {
  const own = tenant.meta.fusionSourceId ? tenant.sources.get(tenant.meta.fusionSourceId) : undefined;
  if (!own) throw new Error('the simulated tenant has no connector source');
  const attrs = own.connectorAttributes;
  const sources = Array.isArray(attrs['sources']) ? (attrs['sources'] as unknown[]) : [];
  return {
    baseurl: opts.baseurl,
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    spConnectorInstanceId: attrs['spConnectorInstanceId'],
    ...(opts.proxyUrl ? { proxyEnabled: true, proxyUrl: opts.proxyUrl, proxyPassword: opts.proxyPassword } : {}),
    sources,
    requestsPerSecond: opts.requestsPerSecond ?? 100,
    maxConcurrentRequests: 10,
    batchSize: 250,
    attributeDefinitions: [
      {
        name: 'login',
        expression: '$firstName.substring(0,1)$lastName',
        type: 'unique',
        case: 'lower',
        normalize: true,
        spaces: true,
        maxLength: 20,
      },
      { name: 'employeeId', expression: 'F$counter', type: 'counter', digits: 6 },
    ],
    matching: {
      attributes: [
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 88, mandatory: true },
        { attribute: 'department', algorithm: 'exact', threshold: 100, mandatory: true },
      ],
      reviewTopK: 5,
    },
  };
}
