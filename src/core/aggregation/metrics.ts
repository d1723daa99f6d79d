import { Counter } from 'prom-client';
import { METRIC } from '../../observability/metric-names';
import { registry } from '../../observability/metrics-registry';

/** Run-lock outcomes: acquired, busy (another run holds it), stale (a leftover processing flag was cleared). */
export const lockAttempts = new Counter({
  name: METRIC.lockAttempts,
  help: 'Aggregation run-lock attempts by result',
  labelNames: ['result'],
  registers: [registry],
});

export const accountsProcessed = new Counter({
  name: METRIC.accountsProcessed,
  help: 'Connector accounts emitted by aggregation',
  labelNames: ['command'],
  registers: [registry],
});

// Series at 0 from the start, so the first busy lock or the first run shows in increase().
for (const result of ['acquired', 'busy', 'stale']) lockAttempts.inc({ result }, 0);
accountsProcessed.inc({ command: 'std:account:list' }, 0);
