import type { ConfigReader } from './config-reader';

/**
 * The settings that govern platform API use: where the platform is, how to authenticate, and how
 * hard to press it. The one place that names them and sets their defaults and limits; the
 * connector configuration (fusion-config.ts) and the platform adapter (platform-settings.ts) both
 * read them through here.
 */
export interface ApiUseSettings {
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
}

/** What an administrator who leaves the fields empty gets. */
export const API_USE_DEFAULTS = {
  enableQueue: true,
  maxConcurrentRequests: 10,
  requestsPerSecond: 10,
  enableBatching: true,
  batchSize: 250,
  provisioningTimeout: 300,
} as const;

const LIMITS = {
  maxConcurrentRequests: { min: 1, max: 100 },
  requestsPerSecond: { min: 1, max: 1000 },
  batchSize: { min: 1, max: 10000 },
  provisioningTimeout: { min: 1, max: 86400 },
} as const;

type Limited = keyof typeof LIMITS;

/**
 * Independent platform calls one command keeps in flight (a listing's pages read ahead, the review
 * forms a run creates): "Max concurrent requests" under "Enable queue" (its rate limiter and
 * concurrency cap pace them), 4 without it (nothing else bounds them then).
 */
export function callsInFlight(s: Pick<ApiUseSettings, 'enableQueue' | 'maxConcurrentRequests'>): number {
  return s.enableQueue ? s.maxConcurrentRequests : 4;
}

/** Records every problem in `r` (nothing thrown): the caller reports them together. */
export function readApiUseSettings(r: ConfigReader, raw: Record<string, unknown>): ApiUseSettings {
  const int = (key: Limited): number => r.int(raw, key, API_USE_DEFAULTS[key], LIMITS[key].min, LIMITS[key].max);
  const baseurl = r.url(raw, 'baseurl', true);
  if (baseurl !== '') {
    const u = new URL(baseurl);
    // Paths are appended to it: a query or fragment would end up in the middle of every URL.
    if (u.search || u.hash) r.problem('baseurl', raw.baseurl, 'a base address without query or fragment');
  }
  return {
    baseurl,
    clientId: r.requiredStr(raw, 'clientId').trim(),
    clientSecret: r.requiredStr(raw, 'clientSecret').trim(),
    enableQueue: r.bool(raw, 'enableQueue', API_USE_DEFAULTS.enableQueue),
    maxConcurrentRequests: int('maxConcurrentRequests'),
    requestsPerSecond: int('requestsPerSecond'),
    enableBatching: r.bool(raw, 'enableBatching', API_USE_DEFAULTS.enableBatching),
    batchSize: int('batchSize'),
    provisioningTimeout: int('provisioningTimeout'),
  };
}
