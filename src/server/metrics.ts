import { Counter, Gauge, Histogram } from 'prom-client';
import { ERROR_CODES } from '../errors/error-codes';
import { initErrorSeries } from '../observability/error-metrics';
import { METRIC } from '../observability/metric-names';
import { registry } from '../observability/metrics-registry';

export const httpRequests = new Counter({
  name: METRIC.httpRequests,
  help: 'HTTP requests by route template, method and status (probes and /metrics not counted)',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: METRIC.httpRequestDuration,
  help: 'HTTP request duration in seconds (streams: until the last byte; probes and /metrics not counted)',
  labelNames: ['route', 'method'] as const,
  buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, 3600],
  registers: [registry],
});

const AUTH_FAILURE_REASONS = ['missing', 'mismatch', 'throttled'] as const;

export const authFailures = new Counter({
  name: METRIC.authFailures,
  help: 'Rejected proxy passwords (reason = missing | mismatch) and throttled requests (reason = throttled)',
  labelNames: ['reason'] as const,
  registers: [registry],
});
for (const reason of AUTH_FAILURE_REASONS) authFailures.inc({ reason }, 0);

export const activeStreams = new Gauge({
  name: METRIC.activeStreams,
  help: 'Responses currently streaming to clients',
  registers: [registry],
});

export const streamBytes = new Counter({
  name: METRIC.streamBytes,
  help: 'NDJSON bytes written to clients',
  labelNames: ['mode'] as const,
  registers: [registry],
});

export const streamItems = new Counter({
  name: METRIC.streamItems,
  help: 'NDJSON items written to clients',
  labelNames: ['mode'] as const,
  registers: [registry],
});

/** Every status the proxy endpoint can answer: 200 and each status of the error-code table. */
const PROXY_STATUSES = [...new Set([200, ...Object.values(ERROR_CODES).map((c) => c.status)])].sort((a, b) => a - b);

/**
 * The api's series at 0 from the start (see initErrorSeries for why): the proxy route with every
 * status it can answer, the stream counters of its mode and the api's error codes.
 */
export function initProxyRouteSeries(route: string, mode: string): void {
  for (const status of PROXY_STATUSES) httpRequests.inc({ route, method: 'POST', status: String(status) }, 0);
  httpRequestDuration.zero({ route, method: 'POST' });
  streamBytes.inc({ mode }, 0);
  streamItems.inc({ mode }, 0);
  initErrorSeries('api');
}
