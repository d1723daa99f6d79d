/**
 * The probabilistic model's parameters over one aggregation run: which parameters the matcher starts
 * with, whether the run holds its new accounts to estimate them, and what happens to the estimate (kept,
 * stored, or replaced by the stored ones). The rules model has none of this: every method is a no-op.
 *
 * A run that reads every account it can (RunScope.estimatesModel) estimates from the baseline and all
 * its new accounts once every source is read; the stored parameters stay at hand in case it has too
 * little new data. A limited or filtered run reuses the stored ones, or, with none usable, estimates at
 * its first match from what it reads and says so (that estimate is not stored).
 */
import type { FusionConfig } from '../config/fusion-config';
import { isFusionError } from '../errors';
import type { EstimateFeed } from '../matching/parallel/estimate-feed';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import type { MatcherOptions, ModelParameters, ParameterEstimate } from '../matching/types';
import type { Logger } from '../ports/logger';
import { configurationWarnings } from '../matching/probabilistic/diagnostics';
import type { AggregationSummary } from './aggregation-summary';
import { FEW_CANDIDATE_PAIRS, FEW_NEW_ACCOUNTS, readStoredParameters } from './model-parameters';
import type { RunScope } from './run-scope';

export interface ModelLifecycleDeps {
  config: FusionConfig;
  scope: RunScope;
  /** The own source's connectorAttributes as read at the start of the run. */
  ownAttributes: Record<string, unknown>;
  summary: AggregationSummary;
  logger: Logger;
  /** Stores the estimate on the own source, only while the run still holds its lock. */
  store: (parameters: ModelParameters) => Promise<void>;
}

export class ModelLifecycle {
  private readonly options: MatcherOptions;
  /** Full run: the stored parameters, kept when this run has too little data to re-estimate. */
  private fallback?: ModelParameters;
  /** Full run: new accounts are held until every source is read, then estimated over at once. */
  readonly holdsNewAccounts: boolean;

  constructor(private readonly d: ModelLifecycleDeps) {
    this.options = this.decide();
    this.holdsNewAccounts = d.config.matching.model === 'probabilistic' && d.scope.estimatesModel;
  }

  private decide(): MatcherOptions {
    const { config, scope, ownAttributes, summary, logger } = this.d;
    if (config.matching.model !== 'probabilistic') return {};
    const stored = readStoredParameters(ownAttributes, config.matching);
    if (scope.estimatesModel) {
      summary.modelParameters = { source: 'estimated', stored: false };
      if ('parameters' in stored) this.fallback = stored.parameters;
      logger.info(
        'Probabilistic matching: a full aggregation estimates the model parameters from the baseline and all its new accounts',
      );
      return {};
    }
    if ('parameters' in stored) {
      const { estimatedAt, records } = stored.parameters;
      summary.modelParameters = { source: 'stored', stored: false, estimatedAt };
      logger.info(
        { estimatedAt, records },
        `Probabilistic matching: this run is limited by "Aggregation batch size" or an account filter, so the parameters of the last full aggregation (${estimatedAt}) are reused`,
      );
      return { parameters: stored.parameters };
    }
    summary.modelParameters = { source: 'estimated-from-part', stored: false };
    logger.warn(
      { reason: stored.problem },
      `Probabilistic matching: no usable stored parameters (${stored.problem}); this run is limited by "Aggregation batch size" or an account filter, so it estimates them from the accounts it reads and does not store them. Run a full aggregation to estimate and store them`,
    );
    return {};
  }

  /** Builds the run's matcher; stored parameters made for other comparison levels fall back to an estimate. */
  buildMatcher(build: (o?: MatcherOptions) => AsyncMatcher): AsyncMatcher {
    if (!this.options.parameters) return build(this.options);
    try {
      return build(this.options);
    } catch (e) {
      // Well-formed but made for other comparison levels (an attribute's kind or algorithm changed).
      if (!isFusionError(e, 'MATCHING_INVALID')) throw e;
      this.d.summary.modelParameters = { source: 'estimated-from-part', stored: false };
      this.d.logger.warn(
        { reason: e.message },
        'Probabilistic matching: the stored parameters do not fit the matching configuration; this limited run estimates them from the accounts it reads and does not store them. Run a full aggregation to estimate and store them',
      );
      return build();
    }
  }

  /**
   * Full run, once the baseline is loaded: the feed that takes every new account to match as it is read
   * (estimate-feed.ts), so that phase 1 of the estimate overlaps the reading. Undefined: this run does
   * not hold its new accounts.
   */
  startEstimate(matcher: AsyncMatcher | undefined): EstimateFeed | undefined {
    if (!this.holdsNewAccounts || !matcher || !this.d.summary.modelParameters) return undefined;
    return matcher.beginEstimate();
  }

  /**
   * Full run, once every source is read: estimates the parameters from the baseline and the accounts fed
   * (every new account to match) and stores them. With too few new accounts or candidate pairs the
   * estimate says little: stored parameters that fit are kept instead; with none, the estimate is used
   * and stored with a warning (it is all the data there is; the next full run re-estimates).
   */
  async estimate(matcher: AsyncMatcher | undefined, feed: EstimateFeed | undefined): Promise<void> {
    const info = this.d.summary.modelParameters;
    if (!matcher || !info || !feed) return;
    if (feed.added === 0) {
      await feed.finish(); // ends the feed's call: the matcher takes the batches after it
      if (this.fallback && this.keep(matcher, this.fallback, 'this full aggregation found no new account to match')) {
        return;
      }
      this.d.logger.info('Probabilistic matching: no new account to match, so nothing is estimated or stored');
      return;
    }
    const estimate = await feed.finish();
    if (!estimate) return;
    logConfigurationWarnings(this.d.logger, estimate.parameters);
    const few = estimate.accounts < FEW_NEW_ACCOUNTS || estimate.candidatePairs < FEW_CANDIDATE_PAIRS;
    const basis = `${estimate.accounts} new account(s) and ${estimate.candidatePairs} candidate pair(s)`;
    if (few && this.fallback && this.keep(matcher, this.fallback, `the estimate rests on only ${basis}`)) return;
    await this.store(estimate);
    if (few) {
      this.d.logger.warn(
        { accounts: estimate.accounts, candidatePairs: estimate.candidatePairs },
        `Probabilistic matching: the parameters were estimated from only ${basis} (at least ${FEW_NEW_ACCOUNTS} and ${FEW_CANDIDATE_PAIRS} are needed for a reliable estimate) and none usable were stored; the match probabilities are unreliable. The next full aggregation with more new accounts re-estimates them; until then, check the review forms or use the rules model`,
      );
    }
  }

  /** Switches the matcher to the stored parameters; false when they do not fit its comparison levels. */
  private keep(matcher: AsyncMatcher, stored: ModelParameters, why: string): boolean {
    try {
      matcher.useParameters(stored);
    } catch (e) {
      if (!isFusionError(e, 'MATCHING_INVALID')) throw e;
      this.d.logger.warn(
        { reason: e.message },
        'Probabilistic matching: the stored parameters do not fit the matching configuration',
      );
      return false;
    }
    this.d.summary.modelParameters = { source: 'stored', stored: false, estimatedAt: stored.estimatedAt };
    this.d.logger.info(
      { estimatedAt: stored.estimatedAt, records: stored.records },
      `Probabilistic matching: ${why}, too little to re-estimate the parameters; the stored ones (${stored.estimatedAt}) are kept`,
    );
    return true;
  }

  private async store(estimate: ParameterEstimate): Promise<void> {
    const info = this.d.summary.modelParameters;
    if (!info) return;
    const { parameters } = estimate;
    await this.d.store(parameters);
    info.stored = true;
    info.estimatedAt = parameters.estimatedAt;
    this.d.logger.info(
      {
        records: parameters.records,
        accounts: estimate.accounts,
        candidatePairs: estimate.candidatePairs,
        prior: parameters.prior,
        estimatedAt: parameters.estimatedAt,
      },
      'Probabilistic matching: the estimated parameters are stored on the connector source',
    );
  }
}

/** What the estimate read about the configuration (correlated attributes, no evidence, weak generators), at warn. */
function logConfigurationWarnings(logger: Logger, parameters: ModelParameters): void {
  for (const w of configurationWarnings(parameters)) {
    logger.warn(
      { attribute: w.attribute, warning: w.kind },
      `Probabilistic matching configuration: ${w.message}. Tune with "fusion-proxy match --report"`,
    );
  }
}
