import { Counter, Gauge, Histogram } from 'prom-client';
import { METRIC } from '../observability/metric-names';
import { registry } from '../observability/metrics-registry';

export const httpRequests = new Counter({
  name: METRIC.httpRequests,
  help: 'HTTP requests by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: METRIC.httpRequestDuration,
  help: 'HTTP request duration in seconds (streams: until the last byte)',
  labelNames: ['route', 'method'] as const,
  buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 30, 120, 600, 3600],
  registers: [registry],
});

export const authFailures = new Counter({
  name: METRIC.authFailures,
  help: 'Rejected proxy passwords (reason = missing | mismatch) and throttled requests (reason = throttled)',
  labelNames: ['reason'] as const,
  registers: [registry],
});

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
