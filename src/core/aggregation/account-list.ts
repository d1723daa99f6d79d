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
 *     counters are persisted before a batch is emitted;
 *  5. emit the existing connector accounts whose source accounts did not all show up, so that an
 *     aggregation limited by filters or "Aggregation batch size" never deletes them.
 */
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../command-runner';
import { processingBatchSize, type FusionConfig } from '../config/fusion-config';
import type { CoreDeps } from '../core-deps';
import { FusionError } from '../errors';
import { buildMatcher } from '../matching/matcher';
import type { Matcher } from '../matching/matcher';
import type { MatchRecord } from '../matching/types';
import type { Logger } from '../ports/logger';
import type { PlatformAccount, PlatformSession, PlatformSource } from '../ports/platform';
import { RecordingReviewQueue, type ReviewDecisionView, type ReviewQueue } from '../ports/review-queue';
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
  stringList,
  type AccountItem,
} from './connector-account';
import { COUNTERS_KEY, CounterStore } from './counter-store';
import { accountsProcessed } from './metrics';
import { enterRun, type RunGuard } from './run-guard';
import { forceAggregation, resolveSources } from './source-resolution';
import { UniqueRegistry } from './unique-registry';

const RESET_KEY = 'reset';

interface ExistingAccount {
  account: PlatformAccount;
  contributors: string[];
  seen: PlatformAccount[];
}

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

class AggregationRun {
  readonly runId = randomUUID();
  private readonly started = Date.now();
  private readonly logger: Logger;
  private readonly opts: { signal: AbortSignal };
  private readonly existing = new Map<string, ExistingAccount>();
  /** Source account id -> key of the connector account it belongs to. */
  private readonly owner = new Map<string, string>();
  /** Identity id -> key of the connector account correlated with it. */
  private readonly byIdentity = new Map<string, string>();
  /** Identities of connector accounts dropped by a reset: not a baseline for their own rebuilt accounts. */
  private readonly resetIdentities = new Set<string>();
  /** Review decisions per source account id (review-form lifecycle), read at the start of the run. */
  private decisions = new Map<string, ReviewDecisionView>();
  /** Source accounts a decision "not a duplicate" lets through without matching. */
  private readonly approvedNew = new Set<string>();
  /** Approved links to an identity that has no connector account: source account id -> identity id. */
  private readonly linkedIdentity = new Map<string, string>();
  /** Source accounts an approved link joins to an existing connector account in this run. */
  private readonly pendingLinks = new Set<string>();
  /**
   * Decisions applied by this run (their source account was read and its connector account
   * emitted): completed (forms deleted) once everything is emitted.
   */
  private readonly applied: string[] = [];
  /** Accounts of this run that have (or now get) a review form: for discardUnseen. */
  private readonly reviewSeen = new Set<string>();
  /** Keys of connector accounts created by this run (they join the matcher's baseline). */
  private readonly createdKeys = new Set<string>();
  private registry!: UniqueRegistry;
  private counters!: CounterStore;
  private generator!: AttributeGenerator;
  private matcher?: Matcher;
  private reviews!: ReviewQueue;
  private readonly filters = new Map<string, AccountPredicate>();
  private readonly sourceOrder: string[];
  private reset = false;
  private guard?: RunGuard;
  private own!: PlatformSource;
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
    this.sourceOrder = config.sources;
    this.summary = {
      runId: this.runId,
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
      ...(config.aggregationBatchSize > 0 ? { limitedTo: config.aggregationBatchSize } : {}),
    };
  }

  async *run(): AsyncIterable<AccountItem> {
    const { platform, config, logger } = this;
    const resolved = await resolveSources(platform, config, logger, this.opts);
    this.own = resolved.own;
    this.summary.sourceId = resolved.own.id;
    this.summary.skippedSources = resolved.skipped;
    logger.debug({ own: resolved.own.name, sources: resolved.active.map((s) => s.name) }, 'Sources resolved');
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
      yield* this.process(resolved.active);
    } finally {
      await this.guard?.release();
    }
  }

  private async *process(active: PlatformSource[]): AsyncIterable<AccountItem> {
    const { platform, config, logger } = this;
    const ownAttrs = (await platform.getSource(this.own.id, this.opts)).connectorAttributes;
    const resetRequested = config.reset && ownAttrs[RESET_KEY] !== false && ownAttrs[RESET_KEY] !== 'false';
    // A reset drops every connector account the run does not rebuild, so only a run that reads
    // every configured source in full may do it (a disabled source's accounts could not be rebuilt).
    this.reset = resetRequested && this.readsEverything();
    if (resetRequested && !this.reset) {
      const why = this.summary.skippedSources.length
        ? `source(s) ${this.summary.skippedSources.join(', ')} are disabled`
        : 'this run is limited by "Aggregation batch size" or an account filter';
      logger.warn(`Reset accounts? waits for a full aggregation: ${why}, so nothing is reset now`);
    }
    this.summary.reset = this.reset;
    if (this.reset)
      logger.warn(
        'Reset accounts? is on: every connector account is dropped and rebuilt from the sources in this aggregation',
      );
    const initialCounters = this.reset ? {} : CounterStore.readState(ownAttrs);
    this.counters = new CounterStore(initialCounters, async (values) => {
      await platform.patchSourceConnectorAttributes(this.own.id, { [COUNTERS_KEY]: values }, this.opts);
    });
    if (this.reset) await platform.patchSourceConnectorAttributes(this.own.id, { [COUNTERS_KEY]: {} }, this.opts);
    this.registry = new UniqueRegistry(AttributeGenerator.registeredNames(config.attributeDefinitions));
    this.generator = new AttributeGenerator(config, this.registry, this.counters);
    this.reviews =
      this.deps.reviewQueue?.({ config, ctx: this.ctx, platform, own: this.own }) ?? new RecordingReviewQueue();
    this.filters.set('*', compileAccountFilter(config.accountFilter));
    for (const s of active)
      this.filters.set(
        s.name,
        compileAccountFilter(
          config.sourceOptions[s.name]?.accountFilter ?? '',
          `sourceOptions.${s.name}.accountFilter`,
        ),
      );

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
    await this.loadDecisions();

    const batchSize = processingBatchSize(config);
    let pending: Pending = { fresh: [], ready: [] };
    let taken = 0;
    const limit = config.aggregationBatchSize;
    outer: for (const source of active) {
      let read = 0;
      const pageLimit = limit > 0 ? limit - taken : undefined;
      for await (const account of platform.listAccounts(
        { sourceId: source.id, ...(pageLimit ? { limit: pageLimit } : {}) },
        this.opts,
      )) {
        read++;
        if (!this.admit(account, source)) continue;
        const key =
          this.owner.get(account.id) ?? (account.identityId ? this.byIdentity.get(account.identityId) : undefined);
        const existing = key ? this.existing.get(key) : undefined;
        if (existing) {
          existing.seen.push(account);
          if (existing.seen.length >= existing.contributors.length) {
            this.existing.delete(existing.account.nativeIdentity);
            pending.ready.push(existing);
          }
        } else if (!key) {
          if (!this.admitNew(account)) continue;
          pending.fresh.push(account);
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

    // Connector accounts whose source accounts did not all appear are still emitted (refreshed
    // from what was seen), so that a limited or filtered run never makes the platform delete them.
    let rest: ExistingAccount[] = [];
    for (const e of this.existing.values()) {
      rest.push(e);
      if (rest.length >= batchSize) {
        yield* this.flush({ fresh: [], ready: rest });
        rest = [];
      }
    }
    yield* this.flush({ fresh: [], ready: rest });
    this.existing.clear();

    this.guard?.assertHeld();
    await this.closeReviews();
    // Last step: a run that fails before here leaves "Reset accounts?" pending for the next run.
    if (this.reset) await platform.patchSourceConnectorAttributes(this.own.id, { [RESET_KEY]: false }, this.opts);
    this.finish();
  }

  private admit(account: PlatformAccount, source: PlatformSource): boolean {
    if (this.decisions.has(account.id)) this.reviewSeen.add(account.id);
    if (account.isMachine) {
      this.summary.machineAccountsSkipped++;
      this.logger.debug({ account: account.name, source: source.name }, 'Skipped a machine account');
      return false;
    }
    const view = { ...account, sourceName: source.name };
    if (
      !(this.filters.get('*') as AccountPredicate)(view) ||
      !(this.filters.get(source.name) as AccountPredicate)(view)
    ) {
      this.summary.filteredOut++;
      return false;
    }
    return true;
  }

  private async loadConnectorAccounts(): Promise<void> {
    const registered = AttributeGenerator.registeredNames(this.config.attributeDefinitions);
    let n = 0;
    for await (const account of this.platform.listAccounts({ sourceId: this.own.id }, this.opts)) {
      n++;
      if (this.reset) {
        if (account.identityId) this.resetIdentities.add(account.identityId);
        this.summary.accountsReset++;
        continue;
      }
      for (const name of registered) this.registry.register(name, account.attributes[name]);
      const contributors = stringList(account.attributes[ACCOUNTS_ATTRIBUTE]);
      const key = account.nativeIdentity;
      this.existing.set(key, { account, contributors, seen: [] });
      for (const id of contributors) this.owner.set(id, key);
      if (account.identityId) this.byIdentity.set(account.identityId, key);
      if (n % 1000 === 0) this.ctx.progress();
    }
    this.logger.info({ connectorAccounts: n, reset: this.reset }, `Read ${n} connector accounts`);
  }

  private async loadBaseline(): Promise<void> {
    const { config } = this;
    if (config.matching.attributes.length === 0) {
      this.logger.info('No matching attributes are configured: new accounts are not checked for potential duplicates');
      return;
    }
    this.matcher = buildMatcher(config.matching);
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
    await this.counters.flush();
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
    const key = e.account.nativeIdentity;
    const seen = sortBySourceOrder(this.sourceOrder, e.seen);
    const seenIds = new Set(seen.map((a) => a.id));
    const label = `${JSON.stringify(displayNameOf(e.account.attributes, key))} (${key})`;
    let attributes: Record<string, unknown>;
    if (seen.length === 0) {
      // No source account showed up (limited or filtered run, or an account made by std:account:create):
      // keep what the account has and complete the definitions it still lacks.
      // Its stored `accounts`/`sources` are ids and names, not the attribute maps expressions read:
      // hide them, and render only what the account lacks.
      const generated = this.generator.generate({
        label,
        context: { ...e.account.attributes, accounts: [], sources: {} },
        existing: e.account.attributes,
        keepExisting: true,
      });
      attributes = { ...e.account.attributes, ...generated };
    } else {
      const merged = mergeAttributes(
        this.config,
        seen.map((a) => this.view(a)),
      );
      const generated = this.generator.generate({
        label,
        context: this.velocityContext(merged, seen),
        existing: e.account.attributes,
      });
      // A linked source account this run did not read joins on the run that reads it (its form waits).
      const contributors = [
        ...new Set([...e.contributors.filter((id) => !this.pendingLinks.has(id) || seenIds.has(id)), ...seenIds]),
      ];
      for (const id of seenIds) if (this.pendingLinks.has(id)) this.applied.push(id);
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
    return { identity: key, disabled: e.account.disabled, attributes };
  }

  private async createAccounts(fresh: PlatformAccount[]): Promise<AccountItem[]> {
    if (fresh.length === 0) return [];
    const merged = fresh.map((a) => mergeAttributes(this.config, [this.view(a)]));
    let survivors = fresh.map((a, i) => ({ account: a, merged: merged[i] as Record<string, unknown> }));
    if (this.matcher) {
      const toMatch = survivors.filter((s) => !this.approvedNew.has(s.account.id));
      // Every candidate goes to the review (the form shows the best reviewTopK and lists the rest).
      const result = this.matcher.match(
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
          })),
          reviewers: this.config.fusionOwnerIsGlobalReviewer && this.own.owner ? [this.own.owner.id] : [],
          expiresAt: new Date(
            (this.deps.now?.() ?? new Date()).getTime() + this.config.fusionFormExpirationDays * 86_400_000,
          ).toISOString(),
        };
        this.reviewSeen.add(s.account.id);
        await this.reviews.submit(review);
        if (this.summary.pendingReviews.length < 10_000) this.summary.pendingReviews.push(review);
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
      const generated = this.generator.generate({
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
      const linked = this.linkedIdentity.get(s.account.id);
      if (linked) attributes[IDENTITY_ATTRIBUTE] = linked;
      attributes[NAME_ATTRIBUTE] = displayNameOf(attributes, key);
      // New connector accounts are disabled by design: the identity profile's provisioning plan enables them.
      items.push({ identity: key, disabled: true, attributes });
      if (this.matcher) {
        this.createdKeys.add(key);
        baseline.push({ id: key, attributes: s.merged });
      }
      this.summary.accountsCreated++;
      if (this.approvedNew.has(s.account.id)) this.applied.push(s.account.id);
    }
    // Later batches must see this run's new accounts as potential duplicates too.
    this.matcher?.addBaseline(baseline);
    return items;
  }

  /**
   * Review decisions (when the review queue has a lifecycle): "same person as" joins the source
   * account to that person's connector account; "not a duplicate" lets it through unmatched.
   */
  private async loadDecisions(): Promise<void> {
    if (!this.reviews.readDecisions) return;
    this.decisions = await this.reviews.readDecisions();
    for (const [accountId, d] of this.decisions) {
      if (d.kind === 'new-identity') this.approvedNew.add(accountId);
      if (d.kind !== 'link') continue;
      // 'account' names a source account of a connector account, or (for an account created earlier
      // in the run that found the duplicate) that connector account's key itself.
      const key =
        d.candidateKind === 'account'
          ? (this.owner.get(d.identityId) ?? (this.existing.has(d.identityId) ? d.identityId : undefined))
          : (this.byIdentity.get(d.identityId) ?? (this.existing.has(d.identityId) ? d.identityId : undefined));
      const target = key ? this.existing.get(key) : undefined;
      if (!target && d.candidateKind === 'identity') {
        // The person is an identity without a connector account (e.g. from an authoritative HR
        // source): the account becomes a connector account correlated with that identity.
        this.approvedNew.add(accountId);
        this.linkedIdentity.set(accountId, d.identityId);
        continue;
      }
      if (!target) {
        this.logger.warn(
          { accountId, identityId: d.identityId },
          `The review decision for account id ${accountId} names ${d.identityId}, which has no connector account yet; the account keeps waiting`,
        );
        continue;
      }
      // Counted as a contributor now so the connector account waits for it in the main loop.
      if (!target.contributors.includes(accountId)) target.contributors.push(accountId);
      this.owner.set(accountId, target.account.nativeIdentity);
      this.pendingLinks.add(accountId);
    }
  }

  /** New accounts under review (pending or expired form, or an unresolved link) are not matched again. */
  private admitNew(account: PlatformAccount): boolean {
    const d = this.decisions.get(account.id);
    if (!d || d.kind === 'new-identity' || d.kind === 'invalid' || this.approvedNew.has(account.id)) return true;
    this.reviewSeen.add(account.id);
    this.summary.awaitingReview++;
    return false;
  }

  /** The one rule for "a full run": every configured source read, no limit, no filter (may reset, may discard forms). */
  private readsEverything(): boolean {
    return this.config.aggregationBatchSize <= 0 && this.summary.skippedSources.length === 0 && !this.filtered();
  }

  /** True when an account filter (global or per source) excludes accounts from this run. */
  private filtered(): boolean {
    return (
      this.config.accountFilter.trim() !== '' ||
      Object.values(this.config.sourceOptions).some((o) => o.accountFilter.trim() !== '')
    );
  }

  private async closeReviews(): Promise<void> {
    const r = this.reviews;
    for (const accountId of this.applied) await r.completeDecision?.(accountId);
    // Any limit may leave accounts unread (machine, filtered and waiting accounts do not count
    // towards it), so only an unlimited, unfiltered run over every source may discard forms.
    if (this.readsEverything() && r.discardUnseen) {
      // Forms of accounts that were not read (including disabled sources) no longer have an account.
      await r.discardUnseen(this.reviewSeen);
    }
    r.logSummary?.();
    if (r.summary) this.summary.review = r.summary();
  }

  private finish(): void {
    const s = this.summary;
    s.counterFlushes = this.counters.flushCount;
    s.elapsedMs = Date.now() - this.started;
    if (s.machineAccountsSkipped > 0) {
      this.logger.warn(
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
      this.logger.warn(
        { causes },
        `The aggregation produced no accounts${causes.length ? ` (${causes.join('; ')})` : ''}`,
      );
    }
    this.logger.info(
      {
        created: s.accountsCreated,
        updated: s.accountsUpdated,
        emitted: s.accountsEmitted,
        machineAccountsSkipped: s.machineAccountsSkipped,
        filteredOut: s.filteredOut,
        potentialDuplicates: s.potentialDuplicates,
        accountsPerSource: s.accountsPerSource,
        elapsedMs: s.elapsedMs,
      },
      'Aggregation finished',
    );
    this.deps.onAggregationSummary?.(s);
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
