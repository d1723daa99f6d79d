import { Counter } from 'prom-client';
import { METRIC } from './metric-names';
import { registry } from './metrics-registry';

/** Errors seen by any component (http, worker, embedded, ...): one counter, one label set. */
export const errorsTotal = new Counter({
  name: METRIC.errors,
  help: 'Errors by component and FusionError code (UNEXPECTED for anything else)',
  labelNames: ['component', 'code'] as const,
  registers: [registry],
});
