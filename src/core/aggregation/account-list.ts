/**
 * std:account:list: the aggregation, streamed batch by batch.
 *
 *  1. resolve the sources (exact names; disabled ones skipped with a warning), take the run lock
 *     and the processing flag, apply "Reset accounts?", run forced aggregations;
 *  2. read the connector's own accounts: the unique-value registry and the index of which source
 *     account belongs to which connector account are rebuilt from them on every run;
 *  3. load the identity baseline ("Identity Scope Query") into the matcher;
 *  4. stream the source accounts in batches of "Batch size": machine accounts and accounts the
 *     "Account filter" rejects are skipped; accounts of existing connector accounts refresh them;
 *     new accounts are matched against the baseline and each other; those with a potential
 *     duplicate go to the review queue, the others become new, disabled connector accounts;
 *     counters are persisted before a batch is emitted. A full run with the probabilistic model
 *     holds its new accounts until every source is read, estimates the model's parameters from the
 *     baseline and all of them, then processes them in the same batches;
 *  5. emit the existing connector accounts whose source accounts did not all show up, so that an
 *     aggregation limited by filters or "Aggregation batch size" never deletes them.
 */
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../command-runner';
import { processingBatchSize, type FusionConfig } from '../config/fusion-config';
import type { CoreDeps } from '../core-deps';
import { FusionError, isFusionError } from '../errors';
import type { AsyncMatcher } from '../matching/parallel/parallel-matcher';
import {
  buildRemoteRunMatcher,
  buildRunMatcher,
  callsUseRemoteShards,
  callsUseThreads,
  defaultParallelism,
} from '../matching/parallel/parallelism';
import type { MatcherOptions, MatchRecord, ModelParameters, ParameterEstimate } from '../matching/types';
import type { Logger } from '../ports/logger';
import type { PlatformAccount, PlatformSession, PlatformSource } from '../ports/platform';
import { PENDING_REVIEWS_KEPT, RecordingReviewQueue, type ReviewQueue } from '../ports/review-queue';
import { compileAccountFilter, type AccountPredicate } from './account-filter';
import type { AggregationSummary } from './aggregation-summary';
import { AttributeGenerator } from './attribute-generator';
import { mergeAttributes, sortBySourceOrder, type SourceAccountView } from './attribute-merge';
import {
  ACCOUNTS_ATTRIBUTE,
  IDENTITY_ATTRIBUTE,
  KEY_ATTRIBUTE,
  NAME_ATTRIBUTE,
  SOURCES_ATTRIBUTE,
  displayNameOf,
  type AccountItem,
} from './connector-account';
import { ConnectorAccountIndex, type ExistingAccount } from './connector-account-index';
import { COUNTERS_KEY, CounterStore } from './counter-store';
import { accountsProcessed } from './metrics';
import { FEW_CANDIDATE_PAIRS, FEW_NEW_ACCOUNTS, MODEL_PARAMETERS_KEY, readStoredParameters } from './model-parameters';
import { RecordPacker, type PackedAccount } from './packed-account';
import { ReviewDecisions } from './review-decisions';
import { enterRun, type RunGuard } from './run-guard';
import { RunScope } from './run-scope';
import { logFinished, newSummary, recordScope } from './run-summary';
import { forceAggregation, resolveSources } from './source-resolution';
import { UniqueRegistry } from './unique-registry';

const RESET_KEY = 'reset';

interface Pending {
  fresh: PlatformAccount[];
  ready: ExistingAccount[];
}

export function tenantOf(baseurl: string): string {
  try {
    return new URL(baseurl).host.toLowerCase();
  } catch {
    return baseurl;
  }
}

function cancelled(ctx: CommandContext): void {
  if (ctx.signal.aborted) throw new FusionError('COMMAND_CANCELLED', 'The aggregation was cancelled');
}

/** What the run builds once its scope is known (the sources it reads and whether it resets). */
interface RunState {
  scope: RunScope;
  own: PlatformSource;
  reset: boolean;
  counters: CounterStore;
  generator: AttributeGenerator;
  reviews: ReviewQueue;
  decisions: ReviewDecisions;
  filters: Map<string, AccountPredicate>;
  /** The own source's connectorAttributes as read at the start of the run. */
  ownAttributes: Record<string, unknown>;
}

class AggregationRun {
  readonly runId = randomUUID();
  private readonly started = Date.now();
  private readonly logger: Logger;
  private readonly opts: { signal: AbortSignal };
  private readonly index = new ConnectorAccountIndex();
  /** Identities of connector accounts dropped by a reset: not a baseline for their own rebuilt accounts. */
  private readonly resetIdentities = new Set<string>();
  /** Keys of connector accounts created by this run (they join the matcher's baseline). */
  private readonly createdKeys = new Set<string>();
  private readonly registry: UniqueRegistry;
  private matcher?: AsyncMatcher;
  /**
   * Full probabilistic run: the new accounts, held until every source is read so that the estimate
   * sees all of them (an estimate from the first batch alone could rest on no pair at all).
   */
  private held?: PackedAccount[];
  private readonly packer = new RecordPacker();
  /** Full probabilistic run: the stored parameters, kept when this run has too little data to re-estimate. */
  private fallback?: ModelParameters;
  private guard?: RunGuard;
  private state!: RunState;
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
    try {
      yield* this.process(resolved.own, resolved.active, scope);
    } finally {
      // Matching threads end with the run, whatever ended it (error, cancel, consumer gone).
      await this.matcher?.close();
      await this.guard?.release();
    }
  }

  /** Decides the reset, prepares counters, generator, reviews and filters. */
  private async prepare(own: PlatformSource, active: PlatformSource[], scope: RunScope): Promise<RunState> {
    const { platform, config, logger } = this;
    const ownAttrs = (await platform.getSource(own.id, this.opts)).connectorAttributes;
    const resetRequested = config.reset && ownAttrs[RESET_KEY] !== false && ownAttrs[RESET_KEY] !== 'false';
    // A reset drops every connector account the run does not rebuild (RunScope.mayReset).
    const reset = scope.mayReset(resetRequested);
    if (resetRequested && !reset) {
      logger.warn(`Reset accounts? waits for a full aggregation: ${scope.whyLimited()}, so nothing is reset now`);
    }
    this.summary.reset = reset;
    if (reset) {
      logger.warn(
        'Reset accounts? is on: every connector account is dropped and rebuilt from the sources in this aggregation',
      );
    }
    const counters = new CounterStore(reset ? {} : CounterStore.readState(ownAttrs), async (values) => {
      await platform.patchSourceConnectorAttributes(own.id, { [COUNTERS_KEY]: values }, this.opts);
    });
    if (reset) await platform.patchSourceConnectorAttributes(own.id, { [COUNTERS_KEY]: {} }, this.opts);
    const reviews = this.deps.reviewQueue?.({ config, ctx: this.ctx, platform, own }) ?? new RecordingReviewQueue();
    const filters = new Map<string, AccountPredicate>([['*', compileAccountFilter(config.accountFilter)]]);
    for (const s of active) {
      filters.set(
        s.name,
        compileAccountFilter(
          config.sourceOptions[s.name]?.accountFilter ?? '',
          `sourceOptions.${s.name}.accountFilter`,
        ),
      );
    }
    return {
      scope,
      own,
      reset,
      counters,
      generator: new AttributeGenerator(config, this.registry, counters),
      reviews,
      decisions: new ReviewDecisions(reviews, logger),
      filters,
      ownAttributes: ownAttrs,
    };
  }

  private async *process(own: PlatformSource, active: PlatformSource[], scope: RunScope): AsyncIterable<AccountItem> {
    const { platform, config, logger } = this;
    this.state = await this.prepare(own, active, scope);
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

    await this.loadConnectorAccounts();
    cancelled(this.ctx);
    await this.loadBaseline();
    cancelled(this.ctx);
    await decisions.load(this.index);

    const batchSize = processingBatchSize(config);
    let pending: Pending = { fresh: [], ready: [] };
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
          if (this.held) this.held.push(this.packer.packAccount(account));
          else pending.fresh.push(account);
        }
        taken++;
        if (pending.fresh.length + pending.ready.length >= batchSize) {
          yield* this.flush(pending);
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
    yield* this.flush(pending);
    if (this.held) {
      const held = this.held;
      this.held = undefined;
      await this.estimateParameters(held);
      for (let i = 0; i < held.length; i += batchSize) {
        yield* this.flush({ fresh: held.slice(i, i + batchSize).map((p) => this.packer.unpackAccount(p)), ready: [] });
      }
    }

    // Connector accounts whose source accounts did not all appear are still emitted (refreshed
    // from what was seen), so that a limited or filtered run never makes the platform delete them.
    const unfinished = this.index.drainUnfinished();
    for (let i = 0; i < unfinished.length; i += batchSize) {
      yield* this.flush({ fresh: [], ready: unfinished.slice(i, i + batchSize) });
    }

    this.guard?.assertHeld();
    const review = await decisions.close(scope);
    if (review !== undefined) this.summary.review = review;
    // Last step: a run that fails before here leaves "Reset accounts?" pending for the next run.
    if (this.state.reset) await platform.patchSourceConnectorAttributes(own.id, { [RESET_KEY]: false }, this.opts);
    this.finish();
  }

  private admit(account: PlatformAccount, source: PlatformSource): boolean {
    this.state.decisions.noteRead(account.id);
    if (account.isMachine) {
      this.summary.machineAccountsSkipped++;
      this.logger.debug({ account: account.name, source: source.name }, 'Skipped a machine account');
      return false;
    }
    const view = { ...account, sourceName: source.name };
    const filters = this.state.filters;
    if (!(filters.get('*') as AccountPredicate)(view) || !(filters.get(source.name) as AccountPredicate)(view)) {
      this.summary.filteredOut++;
      return false;
    }
    return true;
  }

  private async loadConnectorAccounts(): Promise<void> {
    const registered = AttributeGenerator.registeredNames(this.config.attributeDefinitions);
    let n = 0;
    const { own, reset } = this.state;
    for await (const account of this.platform.listAccounts({ sourceId: own.id }, this.opts)) {
      n++;
      if (reset) {
        if (account.identityId) this.resetIdentities.add(account.identityId);
        this.summary.accountsReset++;
        continue;
      }
      for (const name of registered) this.registry.register(name, account.attributes[name]);
      this.index.add(account);
      if (n % 1000 === 0) this.ctx.progress();
    }
    this.logger.info({ connectorAccounts: n, reset }, `Read ${n} connector accounts`);
  }

  private async loadBaseline(): Promise<void> {
    const { config } = this;
    if (config.matching.attributes.length === 0) {
      this.logger.info('No matching attributes are configured: new accounts are not checked for potential duplicates');
      return;
    }
    this.matcher = this.buildMatcher();
    if (!config.includeIdentities) {
      this.logger.info('Include identities in the scope? is off: new accounts are matched only against each other');
      return;
    }
    let chunk: MatchRecord[] = [];
    for await (const identity of this.platform.searchIdentities(config.identityScopeQuery, this.opts)) {
      if (this.resetIdentities.has(identity.id)) continue;
      chunk.push({ id: identity.id, attributes: identity.attributes });
      this.summary.baselineIdentities++;
      if (chunk.length >= 1000) {
        this.matcher.addBaseline(chunk);
        chunk = [];
        this.ctx.progress();
      }
    }
    this.matcher.addBaseline(chunk);
    if (this.summary.baselineIdentities === 0) {
      this.logger.warn(
        { query: config.identityScopeQuery },
        'The identity baseline is empty: check the Identity Scope Query; no account can match an identity',
      );
    } else {
      this.logger.info(
        { identities: this.summary.baselineIdentities },
        `Identity baseline: ${this.summary.baselineIdentities} identities`,
      );
    }
  }

  private buildMatcher(): AsyncMatcher {
    const opts = this.matcherOptions();
    const parallelism = this.deps.matchingParallelism ?? defaultParallelism();
    // Threads pay off only for calls with many new accounts: batches of "Batch size", or the estimate of a
    // full probabilistic run (every new account at once); otherwise they would prepare the baseline for nothing.
    const useful = this.held !== undefined || callsUseThreads(processingBatchSize(this.config), parallelism);
    // Queue mode: child jobs any worker takes, where the calls are large enough to pay a child's round trips.
    const remote = this.deps.matchingShards;
    const spread =
      remote !== undefined &&
      (this.held !== undefined || callsUseRemoteShards(processingBatchSize(this.config), remote));
    const build = (o: MatcherOptions = {}): AsyncMatcher =>
      spread
        ? buildRemoteRunMatcher(this.config.matching, o, remote, { runId: this.runId, signal: this.ctx.signal })
        : buildRunMatcher(this.config.matching, o, useful ? parallelism : { ...parallelism, threads: 1 });
    if (!opts.parameters) return build(opts);
    try {
      return build(opts);
    } catch (e) {
      // Well-formed but made for other comparison levels (an attribute's kind or algorithm changed).
      if (!isFusionError(e, 'MATCHING_INVALID')) throw e;
      this.summary.modelParameters = { source: 'estimated-from-part', stored: false };
      this.logger.warn(
        { reason: e.message },
        'Probabilistic matching: the stored parameters do not fit the matching configuration; this limited run estimates them from the accounts it reads and does not store them. Run a full aggregation to estimate and store them',
      );
      return build();
    }
  }

  /**
   * Probabilistic model: a run that reads every account it can (no "Aggregation batch size", no account
   * filter; a disabled source cannot be read by any run, so it does not count) estimates the parameters
   * from its own data once every source is read (estimateParameters; the stored ones stay at hand in
   * case it has too little new data); a limited or filtered run reuses the stored ones, or, with none
   * usable, estimates at its first match from what it reads and says so (that estimate is not stored).
   */
  private matcherOptions(): MatcherOptions {
    if (this.config.matching.model !== 'probabilistic') return {};
    const { scope, ownAttributes } = this.state;
    const stored = readStoredParameters(ownAttributes, this.config.matching);
    if (scope.limitedTo === undefined && !scope.filtered) {
      this.summary.modelParameters = { source: 'estimated', stored: false };
      this.held = [];
      if ('parameters' in stored) this.fallback = stored.parameters;
      this.logger.info(
        'Probabilistic matching: a full aggregation estimates the model parameters from the baseline and all its new accounts',
      );
      return {};
    }
    if ('parameters' in stored) {
      const { estimatedAt, records } = stored.parameters;
      this.summary.modelParameters = { source: 'stored', stored: false, estimatedAt };
      this.logger.info(
        { estimatedAt, records },
        `Probabilistic matching: this run is limited by "Aggregation batch size" or an account filter, so the parameters of the last full aggregation (${estimatedAt}) are reused`,
      );
      return { parameters: stored.parameters };
    }
    this.summary.modelParameters = { source: 'estimated-from-part', stored: false };
    this.logger.warn(
      { reason: stored.problem },
      `Probabilistic matching: no usable stored parameters (${stored.problem}); this run is limited by "Aggregation batch size" or an account filter, so it estimates them from the accounts it reads and does not store them. Run a full aggregation to estimate and store them`,
    );
    return {};
  }

  /**
   * Full probabilistic run, once every source is read: estimates the parameters from the baseline and
   * all the new accounts to match, and stores them. With too few new accounts or candidate pairs the
   * estimate says little: stored parameters that fit are kept instead; with none, the estimate is used
   * and stored with a warning (it is all the data there is; the next full run re-estimates).
   */
  private async estimateParameters(fresh: readonly PackedAccount[]): Promise<void> {
    const matcher = this.matcher;
    const info = this.summary.modelParameters;
    if (!matcher || !info) return;
    // Every new account at once: each record carries only the attributes the matcher reads.
    const matched = this.config.matching.attributes.map((a) => a.attribute);
    const records: MatchRecord[] = [];
    for (const text of fresh) {
      const a = this.packer.unpackAccount(text);
      if (this.state.decisions.skipsMatching(a.id)) continue;
      const merged = mergeAttributes(this.config, [this.view(a)]);
      const attributes: Record<string, unknown> = {};
      for (const name of matched) if (merged[name] !== undefined) attributes[name] = merged[name];
      records.push({ id: a.id, attributes });
    }
    if (records.length === 0) {
      if (this.fallback && this.keep(this.fallback, 'this full aggregation found no new account to match')) return;
      this.logger.info('Probabilistic matching: no new account to match, so nothing is estimated or stored');
      return;
    }
    const estimate = await matcher.estimate(records);
    if (!estimate) return;
    const few = estimate.accounts < FEW_NEW_ACCOUNTS || estimate.candidatePairs < FEW_CANDIDATE_PAIRS;
    const basis = `${estimate.accounts} new account(s) and ${estimate.candidatePairs} candidate pair(s)`;
    if (few && this.fallback && this.keep(this.fallback, `the estimate rests on only ${basis}`)) return;
    await this.storeParameters(estimate);
    if (few) {
      this.logger.warn(
        { accounts: estimate.accounts, candidatePairs: estimate.candidatePairs },
        `Probabilistic matching: the parameters were estimated from only ${basis} (at least ${FEW_NEW_ACCOUNTS} and ${FEW_CANDIDATE_PAIRS} are needed for a reliable estimate) and none usable were stored; the match probabilities are unreliable. The next full aggregation with more new accounts re-estimates them; until then, check the review forms or use the rules model`,
      );
    }
  }

  /** Switches the matcher to the stored parameters; false when they do not fit its comparison levels. */
  private keep(stored: ModelParameters, why: string): boolean {
    try {
      this.matcher?.useParameters(stored);
    } catch (e) {
      if (!isFusionError(e, 'MATCHING_INVALID')) throw e;
      this.logger.warn(
        { reason: e.message },
        'Probabilistic matching: the stored parameters do not fit the matching configuration',
      );
      return false;
    }
    this.summary.modelParameters = { source: 'stored', stored: false, estimatedAt: stored.estimatedAt };
    this.logger.info(
      { estimatedAt: stored.estimatedAt, records: stored.records },
      `Probabilistic matching: ${why}, too little to re-estimate the parameters; the stored ones (${stored.estimatedAt}) are kept`,
    );
    return true;
  }

  /** The full run's estimate goes to the own source, only while this run still holds its lock. */
  private async storeParameters(estimate: ParameterEstimate): Promise<void> {
    const info = this.summary.modelParameters;
    if (!info) return;
    const { parameters } = estimate;
    // A run that lost its lock must not overwrite the parameters of the run that took over.
    await this.guard?.confirmHeld();
    info.stored = true;
    info.estimatedAt = parameters.estimatedAt;
    await this.platform.patchSourceConnectorAttributes(
      this.state.own.id,
      { [MODEL_PARAMETERS_KEY]: parameters },
      this.opts,
    );
    this.logger.info(
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

  private view(account: PlatformAccount): SourceAccountView {
    return { sourceName: account.sourceName, attributes: account.attributes };
  }

  private velocityContext(merged: Record<string, unknown>, accounts: PlatformAccount[]): Record<string, unknown> {
    const sources: Record<string, Record<string, unknown>[]> = {};
    for (const a of accounts) (sources[a.sourceName] ??= []).push(a.attributes);
    return { ...merged, accounts: accounts.map((a) => a.attributes), sources };
  }

  private async *flush(batch: Pending): AsyncIterable<AccountItem> {
    if (batch.fresh.length === 0 && batch.ready.length === 0) return;
    cancelled(this.ctx);
    const items: AccountItem[] = [];
    for (const e of batch.ready) items.push(this.refresh(e));
    items.push(...(await this.createAccounts(batch.fresh)));
    // Persist advanced counters before any account using them leaves this process, and only
    // while this run still holds the lock (another run would issue the same values).
    await this.guard?.confirmHeld();
    await this.state.counters.flush();
    this.guard?.assertHeld();
    this.ctx.progress();
    this.logger.debug(
      { refreshed: batch.ready.length, candidates: batch.fresh.length, emitted: items.length },
      'Batch processed',
    );
    accountsProcessed.inc({ command: 'std:account:list' }, items.length);
    for (const item of items) {
      this.guard?.assertHeld();
      this.summary.accountsEmitted++;
      yield item;
    }
  }

  private refresh(e: ExistingAccount): AccountItem {
    const key = e.key;
    const stored = e.attributes();
    const seen = sortBySourceOrder(this.config.sources, e.seen());
    const seenIds = new Set(seen.map((a) => a.id));
    const label = `${JSON.stringify(displayNameOf(stored, key))} (${key})`;
    let attributes: Record<string, unknown>;
    if (seen.length === 0) {
      // No source account showed up (limited or filtered run, or an account made by std:account:create):
      // keep what the account has and complete the definitions it still lacks.
      // Its stored `accounts`/`sources` are ids and names, not the attribute maps expressions read:
      // hide them, and render only what the account lacks.
      const generated = this.state.generator.generate({
        label,
        context: { ...stored, accounts: [], sources: {} },
        existing: stored,
        keepExisting: true,
      });
      attributes = { ...stored, ...generated };
    } else {
      const merged = mergeAttributes(
        this.config,
        seen.map((a) => this.view(a)),
      );
      const generated = this.state.generator.generate({
        label,
        context: this.velocityContext(merged, seen),
        existing: stored,
      });
      const contributors = this.state.decisions.contributorsAfterRefresh(e.contributors, seenIds);
      attributes = {
        ...merged,
        ...generated,
        [ACCOUNTS_ATTRIBUTE]: contributors,
        [SOURCES_ATTRIBUTE]: [...new Set(seen.map((a) => a.sourceName))],
      };
    }
    attributes[KEY_ATTRIBUTE] = key;
    attributes[NAME_ATTRIBUTE] = displayNameOf(attributes, key);
    this.summary.accountsUpdated++;
    return { identity: key, disabled: e.disabled, attributes };
  }

  private async createAccounts(fresh: PlatformAccount[]): Promise<AccountItem[]> {
    if (fresh.length === 0) return [];
    const merged = fresh.map((a) => mergeAttributes(this.config, [this.view(a)]));
    let survivors = fresh.map((a, i) => ({ account: a, merged: merged[i] as Record<string, unknown> }));
    if (this.matcher) {
      const toMatch = survivors.filter((s) => !this.state.decisions.skipsMatching(s.account.id));
      // Every candidate goes to the review (the form shows the best reviewTopK and lists the rest).
      const result = await this.matcher.match(
        toMatch.map((s) => ({ id: s.account.id, attributes: s.merged })),
        { topK: Number.POSITIVE_INFINITY },
      );
      const kept: typeof survivors = [];
      for (const s of survivors) {
        const duplicates = (result.duplicates.get(s.account.id) ?? []).filter(
          (d) => d.candidateId !== s.account.identityId,
        );
        if (duplicates.length === 0) {
          kept.push(s);
          continue;
        }
        this.summary.potentialDuplicates++;
        const review = {
          accountId: s.account.id,
          accountName: s.account.name,
          sourceName: s.account.sourceName,
          attributes: s.merged,
          candidates: duplicates.map((d) => ({
            candidateId: d.candidateId,
            candidateKind: this.createdKeys.has(d.candidateId) ? ('account' as const) : d.candidateKind,
            score: d.score,
            scores: d.scores,
            ...(d.probability !== undefined ? { probability: d.probability } : {}),
            ...(d.matchWeight !== undefined ? { matchWeight: d.matchWeight } : {}),
            ...(d.explanation ? { explanation: d.explanation } : {}),
          })),
          reviewers: this.config.fusionOwnerIsGlobalReviewer && this.state.own.owner ? [this.state.own.owner.id] : [],
          expiresAt: new Date(
            (this.deps.now?.() ?? new Date()).getTime() + this.config.fusionFormExpirationDays * 86_400_000,
          ).toISOString(),
        };
        this.state.decisions.noteSubmitted(s.account.id);
        await this.state.reviews.submit(review);
        if (this.summary.pendingReviews.length < PENDING_REVIEWS_KEPT) this.summary.pendingReviews.push(review);
        this.logger.info(
          { account: s.account.name, source: s.account.sourceName, candidates: duplicates.length },
          'Potential duplicate: the account waits for review',
        );
      }
      survivors = kept;
    }
    const items: AccountItem[] = [];
    const baseline: MatchRecord[] = [];
    for (const s of survivors) {
      const key = randomUUID();
      const label = `${JSON.stringify(displayNameOf(s.merged, s.account.name))} (${s.account.sourceName} account ${s.account.nativeIdentity})`;
      const generated = this.state.generator.generate({
        label,
        context: this.velocityContext(s.merged, [s.account]),
        existing: {},
      });
      const attributes: Record<string, unknown> = {
        ...s.merged,
        ...generated,
        [ACCOUNTS_ATTRIBUTE]: [s.account.id],
        [SOURCES_ATTRIBUTE]: [s.account.sourceName],
        [KEY_ATTRIBUTE]: key,
      };
      const linked = this.state.decisions.linkedIdentityOf(s.account.id);
      if (linked) attributes[IDENTITY_ATTRIBUTE] = linked;
      attributes[NAME_ATTRIBUTE] = displayNameOf(attributes, key);
      // New connector accounts are disabled by design: the identity profile's provisioning plan enables them.
      items.push({ identity: key, disabled: true, attributes });
      if (this.matcher) {
        this.createdKeys.add(key);
        baseline.push({ id: key, attributes: s.merged });
      }
      this.summary.accountsCreated++;
      this.state.decisions.noteCreated(s.account.id);
    }
    // Later batches must see this run's new accounts as potential duplicates too.
    this.matcher?.addBaseline(baseline);
    return items;
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
