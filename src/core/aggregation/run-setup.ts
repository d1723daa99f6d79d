/**
 * What an aggregation run builds once its scope is known: the reset decision, the counters, the unique
 * value generator, the review queue and its decisions, and the account filters.
 */
import type { CommandContext } from '../command-runner';
import type { FusionConfig } from '../config/fusion-config';
import type { CoreDeps } from '../core-deps';
import type { Logger } from '../ports/logger';
import type { CallOptions, PlatformSession, PlatformSource } from '../ports/platform';
import { RecordingReviewQueue, type ReviewQueue } from '../ports/review-queue';
import { compileAccountFilter, type AccountPredicate } from '../config/account-filter';
import type { AggregationSummary } from './aggregation-summary';
import { AttributeGenerator } from './attribute-generator';
import { COUNTER_RESERVE, COUNTERS_KEY, CounterStore } from './counter-store';
import { ReviewDecisions } from './review-decisions';
import type { RunScope } from './run-scope';
import type { UniqueRegistry } from './unique-registry';

/** The own source's flag that "Reset accounts?" is still pending (set false by the run that resets). */
export const RESET_KEY = 'reset';

export interface RunState {
  scope: RunScope;
  own: PlatformSource;
  reset: boolean;
  counters: CounterStore;
  generator: AttributeGenerator;
  reviews: ReviewQueue;
  decisions: ReviewDecisions;
  filters: AccountFilters;
  /** The own source's connectorAttributes as read at the start of the run. */
  ownAttributes: Record<string, unknown>;
}

/** The global "Account filter" and each source's own. */
export class AccountFilters {
  private readonly global: AccountPredicate;
  private readonly perSource = new Map<string, AccountPredicate>();

  constructor(config: FusionConfig, active: readonly PlatformSource[]) {
    this.global = compileAccountFilter(config.accountFilter);
    for (const s of active) {
      this.perSource.set(
        s.name,
        compileAccountFilter(
          config.sourceOptions[s.name]?.accountFilter ?? '',
          `sourceOptions.${s.name}.accountFilter`,
        ),
      );
    }
  }

  admits(view: Parameters<AccountPredicate>[0], sourceName: string): boolean {
    return this.global(view) && (this.perSource.get(sourceName) as AccountPredicate)(view);
  }
}

export interface RunSetupArgs {
  config: FusionConfig;
  platform: PlatformSession;
  deps: CoreDeps;
  ctx: CommandContext;
  logger: Logger;
  summary: AggregationSummary;
  registry: UniqueRegistry;
  opts: CallOptions;
}

/** Decides the reset, prepares counters, generator, reviews and filters. */
export async function prepareRun(
  a: RunSetupArgs,
  own: PlatformSource,
  active: readonly PlatformSource[],
  scope: RunScope,
): Promise<RunState> {
  const { platform, config, logger, opts } = a;
  const ownAttrs = (await platform.getSource(own.id, opts)).connectorAttributes;
  const resetRequested = config.reset && ownAttrs[RESET_KEY] !== false && ownAttrs[RESET_KEY] !== 'false';
  // A reset drops every connector account the run does not rebuild (RunScope.mayReset).
  const reset = scope.mayReset(resetRequested);
  if (resetRequested && !reset) {
    logger.warn(`Reset accounts? waits for a full aggregation: ${scope.whyLimited()}, so nothing is reset now`);
  }
  a.summary.reset = reset;
  if (reset) {
    logger.warn(
      'Reset accounts? is on: every connector account is dropped and rebuilt from the sources in this aggregation',
    );
  }
  const counters = new CounterStore(
    reset ? {} : CounterStore.readState(ownAttrs),
    async (values) => {
      await platform.patchSourceConnectorAttributes(own.id, { [COUNTERS_KEY]: values }, opts);
    },
    COUNTER_RESERVE,
  );
  if (reset) await platform.patchSourceConnectorAttributes(own.id, { [COUNTERS_KEY]: {} }, opts);
  const reviews = a.deps.reviewQueue?.({ config, ctx: a.ctx, platform, own }) ?? new RecordingReviewQueue();
  const filters = new AccountFilters(config, active);
  return {
    scope,
    own,
    reset,
    counters,
    generator: new AttributeGenerator(config, a.registry, counters),
    reviews,
    decisions: new ReviewDecisions(reviews, logger),
    filters,
    ownAttributes: ownAttrs,
  };
}
