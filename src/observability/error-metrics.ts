import { Counter } from 'prom-client';
import { ERROR_CODES, type ErrorCode } from '../errors/error-codes';
import { METRIC } from './metric-names';
import { registry } from './metrics-registry';

/** Errors seen by any component (http, worker, embedded, ...): one counter, one label set. */
export const errorsTotal = new Counter({
  name: METRIC.errors,
  help: 'Errors by component and FusionError code (UNEXPECTED for anything else)',
  labelNames: ['component', 'code'] as const,
  registers: [registry],
});

export type ErrorComponent = 'api' | 'worker' | 'embedded';

/** Codes a server process can count: the proxy client's and the connector's own are raised elsewhere. */
const SERVER_CODES = (Object.entries(ERROR_CODES) as Array<[ErrorCode, (typeof ERROR_CODES)[ErrorCode]]>)
  .filter(([, info]) => info.origin !== 'proxy-client' && info.origin !== 'connector')
  .map(([code]) => code);

/**
 * Creates a component's series at 0 for every code it can count. A series born at its first
 * increment has that 1 as its first sample, and increase() reads it as nothing: a rare error
 * would never show on the dashboard nor in an alert.
 */
export function initErrorSeries(component: ErrorComponent): void {
  for (const code of SERVER_CODES) errorsTotal.inc({ component, code }, 0);
}
