import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram } from 'prom-client';
import { registry } from '../observability/metrics-registry';
import { METRIC } from '../observability/metric-names';
import { ENDPOINT, ENDPOINT_METHODS } from './endpoint-templates';
import type { RetryReason } from './retry-policy';

/**
 * Platform API metrics; labels are path templates and status codes, never ids. The path template's
 * label is `platform_endpoint`, not `endpoint`: Prometheus Operator sets `endpoint` (the scrape
 * port's name) on every target, and with honor_labels false the target's wins, collapsing every
 * platform endpoint into one series named after the port.
 */
export const platformRequests = new Counter({
  name: METRIC.platformRequests,
  help: 'Platform API requests by endpoint template, method and status (network errors: status "error")',
  labelNames: ['platform_endpoint', 'method', 'status'] as const,
  registers: [registry],
});

export const platformRequestDuration = new Histogram({
  name: METRIC.platformRequestDuration,
  help: 'Duration of one platform API request attempt in seconds',
  labelNames: ['platform_endpoint', 'method'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const platform429 = new Counter({
  name: METRIC.platform429,
  help: 'Platform API responses with status 429, by endpoint template',
  labelNames: ['platform_endpoint'] as const,
  registers: [registry],
});

export const platformRetries = new Counter({
  name: METRIC.platformRetries,
  help: 'Platform API request retries by reason (rate_limited, server_error, network, unauthorized)',
  labelNames: ['platform_endpoint', 'reason'] as const,
  registers: [registry],
});

const RETRY_REASONS: readonly RetryReason[] = ['rate_limited', 'server_error', 'network', 'unauthorized'];

/**
 * The statuses a call can end with that an operator looks for: success, the platform's documented
 * errors, a network failure ("error"). Another status still counts; its series starts at its first
 * occurrence.
 */
const KNOWN_STATUSES: Record<string, readonly string[]> = {
  GET: ['200'],
  PATCH: ['200'],
  POST: ['200', '201', '202'],
  DELETE: ['200', '204'],
};
const ERROR_STATUSES = ['400', '401', '403', '404', '429', '500', '502', '503', '504', 'error'];

// Every endpoint is known up front: its series exist at 0 from the start, so the first 429, retry
// or failure of a process shows in increase() instead of being the series' first sample.
for (const endpoint of Object.values(ENDPOINT)) {
  platform429.inc({ platform_endpoint: endpoint }, 0);
  for (const reason of RETRY_REASONS) platformRetries.inc({ platform_endpoint: endpoint, reason }, 0);
}
for (const [endpoint, method] of ENDPOINT_METHODS)
  for (const status of [...KNOWN_STATUSES[method]!, ...ERROR_STATUSES])
    platformRequests.inc({ platform_endpoint: endpoint, method, status }, 0);

/*
 * Per limiter key: one budget is shared by every command of the same tenant and client id (see
 * RedisTokenBucket), so that is what an operator needs to tell apart. The label is the tenant's API
 * host and 8 hex digits of a SHA-256 of the client id: the client secret never takes part, and
 * the client id itself cannot be read back.
 */
const LIMITER_WAIT_BUCKETS = [0, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const rateLimiterWait = new Histogram({
  name: METRIC.rateLimiterWait,
  help: 'Seconds a platform request waited for a rate-limit grant (requests per second), by limiter key',
  labelNames: ['limiter'] as const,
  buckets: LIMITER_WAIT_BUCKETS,
  registers: [registry],
});

export const concurrencyWait = new Histogram({
  name: METRIC.concurrencyWait,
  help: 'Seconds a platform request waited for a slot under "Maximum concurrent requests", by limiter key',
  labelNames: ['limiter'] as const,
  buckets: LIMITER_WAIT_BUCKETS,
  registers: [registry],
});

export const rateLimitConfiguredRps = new Gauge({
  name: METRIC.rateLimitConfiguredRps,
  help: 'Configured platform requests per second of a limiter key (the last command of that key seen by this process)',
  labelNames: ['limiter'] as const,
  registers: [registry],
});

export const rateLimitRequests = new Counter({
  name: METRIC.rateLimitRequests,
  help: 'Platform requests sent under a limiter key (its achieved rate is rate() of this, summed over pods)',
  labelNames: ['limiter'] as const,
  registers: [registry],
});

export const rateLimitThrottled = new Counter({
  name: METRIC.rateLimitThrottled,
  help: 'Platform 429 answers received under a limiter key',
  labelNames: ['limiter'] as const,
  registers: [registry],
});

/**
 * Most limiter keys one process labels; later ones share "other". A proxy serves a handful of
 * tenants, so this bound is only reached by a misuse (e.g. a client id per request).
 */
export const MAX_LIMITER_LABELS = 50;
export const OTHER_LIMITER = 'other';
const limiterLabels = new Set<string>();

/** The `limiter` label of a tenant (API host) and client id; registers its series at 0 on first sight. */
export function limiterLabel(tenant: string, clientId: string): string {
  const key = `${tenant}/${createHash('sha256').update(clientId).digest('hex').slice(0, 8)}`;
  if (limiterLabels.has(key)) return key;
  const label = limiterLabels.size < MAX_LIMITER_LABELS ? key : OTHER_LIMITER;
  if (!limiterLabels.has(label)) {
    limiterLabels.add(label);
    rateLimitRequests.inc({ limiter: label }, 0);
    rateLimitThrottled.inc({ limiter: label }, 0);
    rateLimiterWait.zero({ limiter: label });
    concurrencyWait.zero({ limiter: label });
  }
  return label;
}
