import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * One registry for the process. Modules declare their metrics at load time on this registry
 * (see docs in docs/metrics.md); labels are bounded: command type, endpoint template,
 * status, outcome, never ids.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'fusion_process_' });
