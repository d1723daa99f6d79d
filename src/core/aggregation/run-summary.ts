import type { Logger } from '../ports/logger';
import type { AggregationSummary } from './aggregation-summary';
import type { RunScope } from './run-scope';

/** The counters of a run, all at zero. */
export function newSummary(runId: string, limitedTo: number | undefined): AggregationSummary {
  return {
    runId,
    sourceId: '',
    accountsPerSource: {},
    skippedSources: [],
    machineAccountsSkipped: 0,
    filteredOut: 0,
    accountsCreated: 0,
    accountsUpdated: 0,
    accountsReset: 0,
    accountsEmitted: 0,
    potentialDuplicates: 0,
    awaitingReview: 0,
    pendingReviews: [],
    baselineIdentities: 0,
    reset: false,
    counterFlushes: 0,
    elapsedMs: 0,
    timings: {},
    ...(limitedTo !== undefined ? { limitedTo } : {}),
  };
}

/** Records the scope the run resolved to. */
export function recordScope(s: AggregationSummary, sourceId: string, scope: RunScope): void {
  s.sourceId = sourceId;
  s.skippedSources = [...scope.skippedSources];
}

/** The closing log lines: what was skipped, why nothing came out (if so), and the totals. */
export function logFinished(s: AggregationSummary, logger: Logger): void {
  if (s.machineAccountsSkipped > 0) {
    logger.warn(
      { count: s.machineAccountsSkipped },
      `Skipped ${s.machineAccountsSkipped} machine accounts (isMachine): machine accounts are not supported`,
    );
  }
  if (s.accountsEmitted === 0) {
    const causes = [
      s.skippedSources.length ? `disabled sources: ${s.skippedSources.join(', ')}` : '',
      s.filteredOut ? `${s.filteredOut} accounts excluded by the account filter` : '',
      s.machineAccountsSkipped ? `${s.machineAccountsSkipped} machine accounts` : '',
      s.potentialDuplicates ? `${s.potentialDuplicates} accounts waiting for review` : '',
      Object.values(s.accountsPerSource).every((n) => n === 0) ? 'the sources returned no accounts' : '',
    ].filter(Boolean);
    logger.warn({ causes }, `The aggregation produced no accounts${causes.length ? ` (${causes.join('; ')})` : ''}`);
  }
  logger.info(
    {
      created: s.accountsCreated,
      updated: s.accountsUpdated,
      emitted: s.accountsEmitted,
      machineAccountsSkipped: s.machineAccountsSkipped,
      filteredOut: s.filteredOut,
      potentialDuplicates: s.potentialDuplicates,
      accountsPerSource: s.accountsPerSource,
      ...(s.modelParameters ? { modelParameters: s.modelParameters } : {}),
      elapsedMs: s.elapsedMs,
      timings: s.timings,
    },
    'Aggregation finished',
  );
}
