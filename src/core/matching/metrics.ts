import { Counter, Histogram } from 'prom-client';
import { METRIC } from '../../observability/metric-names';
import { registry } from '../../observability/metrics-registry';
import { ALGORITHMS, CANDIDATE_BUCKETS, type MatchStats, type PairOutcome } from './types';

const candidates = new Histogram({
  name: METRIC.matchingCandidates,
  help: 'Candidate pairs scored per matched account, by the algorithm of the index that generated them',
  labelNames: ['attribute_algorithm'],
  buckets: CANDIDATE_BUCKETS.filter((b) => Number.isFinite(b)),
  registers: [registry],
});

const fullScans = new Counter({
  name: METRIC.matchingFullScans,
  help: 'Index probes that had to walk values no filter applies to (threshold too low or values too short)',
  labelNames: ['algorithm'],
  registers: [registry],
});

const pairs = new Counter({
  name: METRIC.matchingPairs,
  help: 'Scored candidate pairs by outcome: matched, below_threshold, mandatory_failed, value_missing',
  labelNames: ['reason'],
  registers: [registry],
});

// Series at 0 from the start, so the first event of each shows in increase().
const PAIR_OUTCOMES: readonly PairOutcome[] = ['matched', 'below_threshold', 'mandatory_failed', 'value_missing'];
for (const reason of PAIR_OUTCOMES) pairs.inc({ reason }, 0);
for (const algorithm of ALGORITHMS) fullScans.inc({ algorithm }, 0);

/** Per-account observation, bound to the generator label once per run. */
export function candidatesObserver(label: string): (n: number) => void {
  const child = candidates.labels(label);
  return (n) => child.observe(n);
}

export function recordMatchingStats(stats: MatchStats): void {
  for (const [reason, n] of Object.entries(stats.pairs)) if (n > 0) pairs.inc({ reason }, n);
  for (const [algorithm, n] of Object.entries(stats.fullScans))
    if (n !== undefined && n > 0) fullScans.inc({ algorithm }, n);
}
