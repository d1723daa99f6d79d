/** The tuning report's data from one `fusion-proxy match` run. */
import type { MatchingSettings, ModelParameters } from '../../core/matching/types';
import {
  type ReportData,
  type ScoredPair,
  type SweepPoint,
  falsePairs,
  levelRows,
  missedPairs,
  pairHistogram,
  weightAtThreshold,
} from './report-data';

/** Probabilistic model: pairs below this probability are not collected for the sweep and the charts. */
export const SWEEP_FLOOR = 0.01;

/** What the report needs of the run's summary. */
export interface ReportSummary {
  identities: number;
  accounts: number;
  probabilityThreshold?: number;
  truthPairs?: number;
  warnings?: string[];
  candidatesMean: number;
  candidatesMax: number;
}

export function reportData(
  settings: MatchingSettings,
  summary: ReportSummary,
  pairs: ScoredPair[],
  points: SweepPoint[],
  parameters: ModelParameters | undefined,
  truth: Set<string> | undefined,
): ReportData {
  const probabilistic = settings.model === 'probabilistic';
  const threshold = probabilistic ? summary.probabilityThreshold : undefined;
  const weightThreshold = threshold !== undefined ? weightAtThreshold(pairs, threshold) : undefined;
  const cut = threshold ?? 0;
  return {
    model: settings.model ?? 'rules',
    identities: summary.identities,
    accounts: summary.accounts,
    ...(threshold !== undefined ? { threshold, floor: SWEEP_FLOOR } : {}),
    ...(weightThreshold !== undefined ? { weightThreshold } : {}),
    weightLabel: probabilistic ? 'match weight' : 'overall score',
    histogram: pairHistogram(pairs),
    sweepLabel: probabilistic ? 'probability threshold' : 'minimum overall score / 100',
    sweep: points,
    ...(summary.truthPairs !== undefined ? { truthPairs: summary.truthPairs } : {}),
    ...(parameters ? { parameters, levels: levelRows(parameters) } : {}),
    ...(summary.warnings?.length ? { warnings: summary.warnings } : {}),
    ...(truth
      ? {
          falsePairs: falsePairs(pairs, cut),
          missedPairs: missedPairs(
            pairs,
            [...truth].map((k) => k.split('\u0000') as [string, string]),
            cut,
          ),
        }
      : {}),
    candidatesMean: summary.candidatesMean,
    candidatesMax: summary.candidatesMax,
  };
}
