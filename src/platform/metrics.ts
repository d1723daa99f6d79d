import { Counter, Gauge, Histogram } from 'prom-client';
import { registry } from '../observability/metrics-registry';
import { METRIC } from '../observability/metric-names';

/** Platform API metrics; labels are path templates and status codes, never ids. */
export const platformRequests = new Counter({
  name: METRIC.platformRequests,
  help: 'Platform API requests by endpoint template, method and status (network errors: status "error")',
  labelNames: ['endpoint', 'method', 'status'] as const,
  registers: [registry],
});

export const platformRequestDuration = new Histogram({
  name: METRIC.platformRequestDuration,
  help: 'Duration of one platform API request attempt in seconds',
  labelNames: ['endpoint', 'method'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const platform429 = new Counter({
  name: METRIC.platform429,
  help: 'Platform API responses with status 429',
  labelNames: ['endpoint'] as const,
  registers: [registry],
});

export const platformRetries = new Counter({
  name: METRIC.platformRetries,
  help: 'Platform API request retries by reason (rate_limited, server_error, network, unauthorized)',
  labelNames: ['endpoint', 'reason'] as const,
  registers: [registry],
});

export const rateLimiterWait = new Histogram({
  name: METRIC.rateLimiterWait,
  help: 'Seconds a platform request waited for the rate limiter and the concurrency cap',
  buckets: [0, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const rateLimitConfiguredRps = new Gauge({
  name: METRIC.rateLimitConfiguredRps,
  help: 'Configured platform requests per second (last configuration seen)',
  registers: [registry],
});
