/**
 * std:account:list: the aggregation, streamed batch by batch.
 *
 *  1. resolve the sources (exact names; disabled ones skipped with a warning), take the run lock
 *     and the processing flag, apply "Reset accounts?", run forced aggregations;
 *  2. read the connector's own accounts: the unique-value registry and the index of which source
 *     account belongs to which connector account are rebuilt from them on every run;
 *  3. load the identity baseline ("Identity Scope Query") into the matcher, side by side with step 2
 *     (one after the other for a reset: its baseline leaves out the identities of what it drops);
 *  4. stream the source accounts in batches of "Batch size": machine accounts and accounts the
 *     "Account filter" rejects are skipped; accounts of existing connector accounts refresh them;
 *     new accounts are matched against the baseline and each other; those with a potential
 *     duplicate go to the review queue, the others become new, disabled connector accounts;
 *     counters are persisted before a batch is emitted. A full run with the probabilistic model
 *     holds its new accounts until every source is read, estimates the model's parameters from the
 *     baseline and all of them (fed to the estimate as they are read, so that its phase 1 overlaps
 *     the reading: estimate-feed.ts), then processes them in the same batches;
 *  5. emit the existing connector accounts whose source accounts did not all show up, so that an
 *     aggregation limited by filters or "Aggregation batch size" never deletes them.
 *
 * This file coordinates; the steps live beside it: run-setup.ts (1), run-inputs.ts (2, 3),
 * batch-processor.ts with account-items.ts and duplicate-review.ts (4), model-lifecycle.ts (the
 * probabilistic parameters), RunScope (what kind of run this is).
 */
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../command-runner';
import { processingBatchSize, type FusionConfig } from '../config/fusion-config';
import type { CoreDeps } from '../core-deps';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import {
  buildRemoteRunMatcher,
  buildRunMatcher,
  callsUseRemoteShards,
  callsUseThreads,
  defaultParallelism,
  threadsCappedMessage,
} from '../matching/parallel/parallelism';
import type { MatcherOptions, ModelParameters } from '../matching/types';
import type { Logger } from '../ports/logger';
import type { PlatformAccount, PlatformSession, PlatformSource } from '../ports/platform';
import { AccountItemBuilder } from './account-items';
import type { AggregationSummary } from './aggregation-summary';
import { AttributeGenerator } from './attribute-generator';
import type { AccountItem } from './connector-account';
import { ConnectorAccountIndex } from './connector-account-index';
import { releaseCounters } from './counter-store';
import { DerivedKeys } from './derived-key';
import { IdPool } from './id-pool';
import { BatchProcessor, throwIfCancelled, type Batch } from './batch-processor';
import { reviewExpiry } from './duplicate-review';
import { ReadAhead } from './read-ahead';
import { ModelLifecycle } from './model-lifecycle';
import { MODEL_PARAMETERS_KEY } from './model-parameters';
import { EstimateHold } from './estimate-hold';
import { partitionedRun } from './partitioned-run';
import { enterRun, type RunGuard } from './run-guard';
import { CandidateDirectory } from './candidate-directory';
import { checkReviewFlood } from './review-flood-guard';
import { loadIdentityBaseline, readRunInputs, type RunInputsArgs } from './run-inputs';
import { RunScope } from './run-scope';
import { RESET_KEY, prepareRun, type RunState } from './run-setup';
import { logFinished, newSummary, recordScope } from './run-summary';
import { forceAggregation, resolveSources } from './source-resolution';
import { UniqueRegistry } from './unique-registry';
import { tenantOf } from '../config/tenant';

class AggregationRun {
  readonly runId = randomUUID();
  /** New accounts' connector keys (derived-key.ts). */
  private readonly keys = new DerivedKeys();
  /** Ids of the new source accounts read (listedBefore). */
  private readonly freshIds = new IdPool();
  private readonly started = Date.now();
  private readonly logger: Logger;
  private readonly opts: { signal: AbortSignal };
  private readonly index = new ConnectorAccountIndex();
  private readonly registry: UniqueRegistry;
  private matcher?: AsyncMatcher;
  private model?: ModelLifecycle;
  /** Display data of the baseline for review forms (see candidate-directory.ts). */
  private directory?: CandidateDirectory;
  /** Full probabilistic run: the new accounts, held for the estimate. */
  private held?: EstimateHold;
  private ahead!: ReadAhead;
  private guard?: RunGuard;
  private state!: RunState;
  private batches!: BatchProcessor;
  private readonly summary: AggregationSummary;

  constructor(
    private readonly config: FusionConfig,
    private readonly platform: PlatformSession,
    private readonly deps: CoreDeps,
    private readonly ctx: CommandContext,
    private readonly detached: () => PlatformSession,
  ) {
    this.logger = ctx.logger;
    this.opts = { signal: ctx.signal };
    this.registry = new UniqueRegistry(AttributeGenerator.registeredNames(config.attributeDefinitions));
    this.summary = newSummary(this.runId, config.aggregationBatchSize > 0 ? config.aggregationBatchSize : undefined);
  }

  async *run(): AsyncIterable<AccountItem> {
    const { platform, config, logger } = this;
    const resolved = await resolveSources(platform, config, logger, this.opts);
    // The platform sends an enable for each new account this run outputs: they skip the source listing.
    this.deps.ownSources?.remember(config, resolved.own);
    const scope = new RunScope(config, { read: resolved.active.map((s) => s.name), skipped: resolved.skipped });
    recordScope(this.summary, resolved.own.id, scope);
    logger.debug({ own: resolved.own.name, sources: scope.sourcesRead }, 'Sources resolved');
    if (config.concurrencyCheckEnabled) {
      this.guard = await enterRun(
        {
          platform,
          detached: this.detached,
          lock: this.deps.runLock,
          source: resolved.own,
          tenant: tenantOf(config.baseurl),
          runId: this.runId,
          ttlMs: this.deps.lockTtlMs ?? 60_000,
          logger,
          now: this.deps.now ?? (() => new Date()),
        },
        this.opts,
      );
    } else {
      logger.debug('Concurrency check is off: the run lock and the processing flag are bypassed');
    }
    let finished = false;
    try {
      yield* this.process(resolved.own, resolved.active, scope);
      finished = true;
    } finally {
      // Matching threads end with the run, whatever ended it (error, cancel, consumer gone).
      await this.matcher?.close();
      await this.guard?.release(!finished);
    }
  }

  private inputs(): RunInputsArgs {
    const { config, platform, logger, summary, opts } = this;
    return { config, platform, logger, summary, opts, progress: () => this.ctx.progress() };
  }

  private async *process(own: PlatformSource, active: PlatformSource[], scope: RunScope): AsyncIterable<AccountItem> {
    const { platform, config, logger } = this;
    this.state = await prepareRun(
      {
        config,
        platform,
        deps: this.deps,
        ctx: this.ctx,
        logger,
        summary: this.summary,
        registry: this.registry,
        opts: this.opts,
      },
      own,
      active,
      scope,
    );
    const { decisions } = this.state;

    for (const s of active) {
      if (config.sourceOptions[s.name]?.forceAggregation) {
        await forceAggregation(
          platform,
          s,
          config.provisioningTimeout,
          this.deps.taskPollMs ?? 2000,
          logger,
          this.opts,
        );
      }
    }

    await readRunInputs(this.inputs(), {
      own,
      reset: this.state.reset,
      into: { registry: this.registry, index: this.index },
      loadBaseline: (resetIdentities, inputs) => this.loadBaseline(resetIdentities, inputs),
    });
    this.summary.timings.baselineMs = Date.now() - this.started;
    throwIfCancelled(this.ctx);
    await decisions.load(this.index);
    // After the decisions: an approved account is not matched, so not estimated over either.
    if (this.held) this.held.feed = this.model?.startEstimate(this.matcher);
    const createdKeys = new Set<string>();
    this.batches = new BatchProcessor({
      config,
      ctx: this.ctx,
      logger,
      summary: this.summary,
      state: this.state,
      items: new AccountItemBuilder(config, this.state.generator, decisions, this.summary, this.keys),
      reviewDefaults: {
        createdKeys,
        ...(this.directory ? { directory: this.directory } : {}),
        reviewers: config.fusionOwnerIsGlobalReviewer && own.owner ? [own.owner.id] : [],
        expiresAt: reviewExpiry(config.fusionFormExpirationDays, () => this.deps.now?.() ?? new Date()),
      },
      matcher: this.matcher,
      guard: this.guard,
      createdKeys,
      started: this.started,
    });
    // A full probabilistic run holds its new accounts instead (this.held): nothing to foresee.
    this.ahead = new ReadAhead(config, this.held ? undefined : this.matcher, this.batches);

    const batchSize = processingBatchSize(config);
    let pending: Batch = { fresh: [], ready: [] };
    let taken = 0;
    const limit = scope.limitedTo ?? 0;
    outer: for (const source of active) {
      let read = 0;
      const pageLimit = limit > 0 ? limit - taken : undefined;
      for await (const account of platform.listAccounts(
        { sourceId: source.id, ...(pageLimit ? { limit: pageLimit } : {}) },
        this.opts,
      )) {
        read++;
        if (!this.admit(account, source)) continue;
        const key = this.index.keyOf(account);
        const existing = key ? this.index.waiting(key) : undefined;
        if (existing) {
          const ready = this.index.see(existing, account);
          if (ready) pending.ready.push(ready);
        } else if (!key) {
          if (decisions.waitsForReview(account.id)) {
            this.summary.awaitingReview++;
            continue;
          }
          if (this.listedBefore(account, source)) continue;
          if (this.held) await this.held.hold(account);
          else pending.fresh.push(account);
        }
        taken++;
        if (pending.fresh.length + pending.ready.length >= batchSize) {
          yield* this.ahead.enqueue(pending);
          pending = { fresh: [], ready: [] };
        }
        if (limit > 0 && taken >= limit) {
          this.summary.accountsPerSource[source.name] = read;
          logger.info({ limit }, `Aggregation batch size reached: ${limit} accounts processed in this run`);
          break outer;
        }
      }
      this.summary.accountsPerSource[source.name] = read;
    }
    this.summary.timings.sourcesReadMs = Date.now() - this.started;
    yield* this.ahead.enqueue(pending);
    yield* this.ahead.drain();
    if (this.held) {
      const held = this.held;
      this.held = undefined;
      await held.feedEstimate();
      await this.model?.estimate(this.matcher, held.feed);
      for (const b of held.batches(batchSize)) yield* this.batches.flush(b);
    }

    // Connector accounts whose source accounts did not all appear are still emitted (refreshed
    // from what was seen), so that a limited or filtered run never makes the platform delete them.
    const unfinished = this.index.drainUnfinished();
    for (let i = 0; i < unfinished.length; i += batchSize) {
      yield* this.batches.flush({ fresh: [], ready: unfinished.slice(i, i + batchSize) });
    }

    // Values written ahead and not issued go back, while the run still holds its lock (the next run
    // issues them; another run may hold the lock once this one lost it).
    await this.guard?.confirmHeld();
    await releaseCounters(
      this.state.counters,
      async () => (await this.platform.getSource(own.id, this.opts)).connectorAttributes,
      logger,
    );
    this.guard?.assertHeld();
    // Before close(): it creates the run's forms and notifies.
    if (this.matcher) checkReviewFlood(config.matching, this.summary);
    const review = await decisions.close(scope);
    if (review !== undefined) this.summary.review = review;
    // Last step: a run that fails before here leaves "Reset accounts?" pending for the next run.
    if (this.state.reset) await platform.patchSourceConnectorAttributes(own.id, { [RESET_KEY]: false }, this.opts);
    this.finish();
  }

  /**
   * A new source account the listing gave twice (offset paging over a list that changed under it):
   * processed once, since one source account makes at most one connector account (and its key).
   */
  private listedBefore(account: PlatformAccount, source: PlatformSource): boolean {
    const before = this.freshIds.size;
    if (this.freshIds.add(account.id) === before) return false;
    this.logger.warn(
      { account: account.name, source: source.name },
      'The source listed this account twice in one aggregation: it is processed once',
    );
    return true;
  }

  private admit(account: PlatformAccount, source: PlatformSource): boolean {
    this.state.decisions.noteRead(account.id);
    if (account.isMachine) {
      this.summary.machineAccountsSkipped++;
      this.logger.debug({ account: account.name, source: source.name }, 'Skipped a machine account');
      return false;
    }
    if (!this.state.filters.admits({ ...account, sourceName: source.name }, source.name)) {
      this.summary.filteredOut++;
      return false;
    }
    return true;
  }

  private async loadBaseline(resetIdentities: ReadonlySet<string>, inputs: RunInputsArgs): Promise<void> {
    // Before the matcher (and its threads) is built: a cancelled run reads as one.
    throwIfCancelled(this.ctx);
    const { config } = this;
    if (config.matching.attributes.length === 0) {
      this.logger.info('No matching attributes are configured: new accounts are not checked for potential duplicates');
      return;
    }
    this.matcher = partitionedRun(
      config,
      this.deps,
      () => this.buildMatcher(),
      this.keys,
      this.state.decisions,
      this.logger,
      { runId: this.runId, signal: this.ctx.signal },
    );
    this.directory = new CandidateDirectory(config.matching.attributes.map((a) => a.attribute));
    if (!config.includeIdentities) {
      this.logger.info('Include identities in the scope? is off: new accounts are matched only against each other');
      return;
    }
    await loadIdentityBaseline(inputs, this.matcher, resetIdentities, this.directory);
  }

  private buildMatcher(): AsyncMatcher {
    const { scope, ownAttributes, own } = this.state;
    this.model = new ModelLifecycle({
      config: this.config,
      scope,
      ownAttributes,
      summary: this.summary,
      logger: this.logger,
      store: (parameters) => this.storeParameters(own, parameters),
    });
    if (this.model.holdsNewAccounts) this.held = new EstimateHold(this.config, this.state.decisions);
    const parallelism = this.deps.matchingParallelism ?? defaultParallelism();
    // Threads pay off only for calls with many new accounts: batches of "Batch size", or the estimate of a
    // full probabilistic run (every new account at once); otherwise they would prepare the baseline for nothing.
    const useful = this.held !== undefined || callsUseThreads(processingBatchSize(this.config), parallelism);
    // Queue mode: child jobs any worker takes, where the calls are large enough to pay a child's round trips.
    const remote = this.deps.matchingShards;
    const spread =
      remote !== undefined &&
      (this.held !== undefined || callsUseRemoteShards(processingBatchSize(this.config), remote));
    return this.model.buildMatcher((o: MatcherOptions = {}): AsyncMatcher =>
      spread
        ? buildRemoteRunMatcher(this.config.matching, o, remote, { runId: this.runId, signal: this.ctx.signal })
        : buildRunMatcher(this.config.matching, o, useful ? parallelism : { ...parallelism, threads: 1 }, (c) =>
            this.logger.warn({ ...c }, threadsCappedMessage(c)),
          ),
    );
  }

  /** The full run's estimate goes to the own source, only while this run still holds its lock. */
  private async storeParameters(own: PlatformSource, parameters: ModelParameters): Promise<void> {
    // A run that lost its lock must not overwrite the parameters of the run that took over.
    await this.guard?.confirmHeld();
    await this.platform.patchSourceConnectorAttributes(own.id, { [MODEL_PARAMETERS_KEY]: parameters }, this.opts);
  }

  private finish(): void {
    this.summary.counterFlushes = this.state.counters.flushCount;
    this.summary.elapsedMs = Date.now() - this.started;
    logFinished(this.summary, this.logger);
    this.deps.onAggregationSummary?.(this.summary);
  }
}

/** `detached`: a platform session not bound to ctx.signal, for the clean-up of a cancelled run. */
export async function* aggregateAccounts(
  config: FusionConfig,
  platform: PlatformSession,
  deps: CoreDeps,
  ctx: CommandContext,
  detached: () => PlatformSession = () => platform,
): AsyncIterable<AccountItem> {
  yield* new AggregationRun(config, platform, deps, ctx, detached).run();
}
