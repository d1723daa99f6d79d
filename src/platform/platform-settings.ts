import { FusionError } from '../core/errors';

/**
 * The connector settings that govern platform API use, read from the configuration object the
 * platform (or the proxy client) sends. Shared by src/platform and src/core/config so that both
 * agree on names, defaults and validation.
 */
export interface PlatformSettings {
  /** Platform API base address, without a trailing slash. */
  baseurl: string;
  clientId: string;
  clientSecret: string;
  /** Throttle requests (rate limiter and concurrency cap). */
  enableQueue: boolean;
  maxConcurrentRequests: number;
  requestsPerSecond: number;
  enableBatching: boolean;
  /** Page size asked for; clamped to each endpoint's maximum. */
  batchSize: number;
  /** Seconds: the deadline of one platform call including all of its retries. */
  provisioningTimeout: number;
  /** Authoritative account source names (exact, case-sensitive). */
  sources: string[];
}

const PLATFORM_SETTING_DEFAULTS = {
  enableQueue: true,
  maxConcurrentRequests: 10,
  requestsPerSecond: 10,
  enableBatching: true,
  batchSize: 250,
  provisioningTimeout: 300,
} as const;

const PLATFORM_SETTING_LIMITS = {
  maxConcurrentRequests: { min: 1, max: 100 },
  requestsPerSecond: { min: 1, max: 1000 },
  batchSize: { min: 1, max: 10000 },
  provisioningTimeout: { min: 1, max: 86400 },
} as const;

function invalid(field: string, value: unknown, allowed: string): FusionError {
  // Never echo a secret: the caller passes a placeholder for clientSecret.
  const shown =
    typeof value === 'string'
      ? JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}...` : value)
      : (JSON.stringify(value) ?? String(value));
  return new FusionError('CONFIG_INVALID', `Invalid configuration: ${field} is ${shown}; allowed: ${allowed}`, {
    field,
    allowed,
  });
}

function requiredString(config: Record<string, unknown>, field: string, secret = false): string {
  const value = config[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalid(field, secret && value !== undefined ? '[redacted]' : value, 'a non-empty string');
  }
  return value.trim();
}

function readBaseUrl(config: Record<string, unknown>): string {
  const raw = requiredString(config, 'baseurl');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('baseurl', raw, 'an absolute http(s) URL such as https://<tenant>.api.identitynow.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalid('baseurl', raw, 'an absolute http(s) URL such as https://<tenant>.api.identitynow.com');
  }
  if (url.search || url.hash) throw invalid('baseurl', raw, 'a base address without query or fragment');
  return raw.replace(/\/+$/, '');
}

function readBoolean(config: Record<string, unknown>, field: string, fallback: boolean): boolean {
  const value = config[field];
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw invalid(field, value, 'true or false');
}

function readInteger(
  config: Record<string, unknown>,
  field: keyof typeof PLATFORM_SETTING_LIMITS,
  fallback: number,
): number {
  const value = config[field];
  if (value === undefined || value === null || value === '') return fallback;
  // Form fields sometimes arrive as numeric strings.
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
  const { min, max } = PLATFORM_SETTING_LIMITS[field];
  if (!Number.isInteger(n) || n < min || n > max) throw invalid(field, value, `an integer from ${min} to ${max}`);
  return n;
}

function readSources(config: Record<string, unknown>): string[] {
  const value = config.sources;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((s): s is string => typeof s === 'string' && s !== '')) {
    throw invalid('sources', value, 'a list of source names (non-empty strings)');
  }
  return [...value];
}

/** Reads and validates the platform settings; throws FusionError CONFIG_INVALID naming the field. */
export function readPlatformSettings(config: Record<string, unknown>): PlatformSettings {
  return {
    baseurl: readBaseUrl(config),
    clientId: requiredString(config, 'clientId'),
    clientSecret: requiredString(config, 'clientSecret', true),
    enableQueue: readBoolean(config, 'enableQueue', PLATFORM_SETTING_DEFAULTS.enableQueue),
    maxConcurrentRequests: readInteger(
      config,
      'maxConcurrentRequests',
      PLATFORM_SETTING_DEFAULTS.maxConcurrentRequests,
    ),
    requestsPerSecond: readInteger(config, 'requestsPerSecond', PLATFORM_SETTING_DEFAULTS.requestsPerSecond),
    enableBatching: readBoolean(config, 'enableBatching', PLATFORM_SETTING_DEFAULTS.enableBatching),
    batchSize: readInteger(config, 'batchSize', PLATFORM_SETTING_DEFAULTS.batchSize),
    provisioningTimeout: readInteger(config, 'provisioningTimeout', PLATFORM_SETTING_DEFAULTS.provisioningTimeout),
    sources: readSources(config),
  };
}

/** Page size for an endpoint: Batch size when batching is on, clamped to the endpoint's maximum. */
export function pageSizeFor(
  settings: Pick<PlatformSettings, 'enableBatching' | 'batchSize'>,
  endpointMax: number,
): number {
  if (!settings.enableBatching) return endpointMax;
  return Math.max(1, Math.min(settings.batchSize, endpointMax));
}
