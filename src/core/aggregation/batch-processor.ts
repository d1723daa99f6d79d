/**
 * One batch of an aggregation ("Batch size" accounts): existing connector accounts refreshed, new
 * accounts matched against the baseline and this run's earlier accounts; those with a potential
 * duplicate go to review, the others become new, disabled connector accounts and join the baseline.
 * Counters are persisted, under the run lock, before any item of the batch leaves.
 */
import type { CommandContext } from '../command-runner';
import type { FusionConfig } from '../config/fusion-config';
import { PerAccountLines } from '../logging/per-account-lines';
import { FusionError } from '../errors';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import type { MatchRecord } from '../matching/types';
import type { Logger } from '../ports/logger';
import type { PlatformAccount } from '../ports/platform';
import { PENDING_REVIEWS_KEPT } from '../ports/review-queue';
import { mergedAlone, type AccountItemBuilder } from './account-items';
import type { AggregationSummary } from './aggregation-summary';
import type { AccountItem } from './connector-account';
import type { ExistingAccount } from './connector-account-index';
import { duplicateReview, type ReviewDefaults } from './duplicate-review';
import { accountsProcessed } from './metrics';
import type { RunGuard } from './run-guard';
import type { RunState } from './run-setup';

export interface Batch {
  fresh: PlatformAccount[];
  ready: ExistingAccount[];
  /** The fresh accounts' merged attributes, where they were merged already (to be foreseen: matching-ahead). */
  merged?: Record<string, unknown>[];
}

/** Each fresh account with its merged attributes (merged here unless the batch has them). */
function mergedFresh(
  config: FusionConfig,
  batch: Batch,
): { account: PlatformAccount; merged: Record<string, unknown> }[] {
  return batch.fresh.map((account, i) => ({
    account,
    merged: batch.merged?.[i] ?? mergedAlone(config, account),
  }));
}

export function throwIfCancelled(ctx: Pick<CommandContext, 'signal'>): void {
  if (ctx.signal.aborted) throw new FusionError('COMMAND_CANCELLED', 'The aggregation was cancelled');
}

export interface BatchProcessorDeps {
  config: FusionConfig;
  ctx: CommandContext;
  logger: Logger;
  summary: AggregationSummary;
  state: RunState;
  items: AccountItemBuilder;
  reviewDefaults: ReviewDefaults;
  /** Undefined without matching attributes: every new account becomes a connector account. */
  matcher: AsyncMatcher | undefined;
  guard: RunGuard | undefined;
  /** Keys of connector accounts created by this run (they join the matcher's baseline). */
  createdKeys: Set<string>;
  /** The run's start (Date.now()): the summary's time to the first item counts from it. */
  started: number;
}

export class BatchProcessor {
  private readonly duplicateLines: PerAccountLines;

  constructor(private readonly d: BatchProcessorDeps) {
    this.duplicateLines = new PerAccountLines(d.logger, 'potential duplicates');
  }

  async *flush(batch: Batch): AsyncIterable<AccountItem> {
    if (batch.fresh.length === 0 && batch.ready.length === 0) return;
    const { ctx, guard, state, logger, summary } = this.d;
    throwIfCancelled(ctx);
    const items: AccountItem[] = [];
    for (const e of batch.ready) items.push(this.d.items.refresh(e));
    items.push(...(await this.createAccounts(batch)));
    // Persist advanced counters before any account using them leaves this process, and only
    // while this run still holds the lock (another run would issue the same values).
    await guard?.confirmHeld();
    await state.counters.flush();
    guard?.assertHeld();
    ctx.progress();
    logger.debug(
      { refreshed: batch.ready.length, candidates: batch.fresh.length, emitted: items.length },
      'Batch processed',
    );
    accountsProcessed.inc({ command: 'std:account:list' }, items.length);
    if (items.length > 0) summary.timings.firstItemMs ??= Date.now() - this.d.started;
    for (const item of items) {
      guard?.assertHeld();
      summary.accountsEmitted++;
      yield item;
    }
  }

  private async createAccounts(batch: Batch): Promise<AccountItem[]> {
    if (batch.fresh.length === 0) return [];
    const { config, matcher, summary } = this.d;
    let survivors = mergedFresh(config, batch);
    if (matcher) {
      const { decisions, reviews } = this.d.state;
      const toMatch = survivors.filter((s) => !decisions.skipsMatching(s.account.id));
      // Every candidate goes to the review (the form shows the best reviewTopK and lists the rest).
      const result = await matcher.match(
        toMatch.map((s) => ({ id: s.account.id, attributes: s.merged })),
        { topK: Number.POSITIVE_INFINITY },
      );
      const kept: typeof survivors = [];
      for (const s of survivors) {
        const review = duplicateReview(s.account, s.merged, result.duplicates.get(s.account.id), this.d.reviewDefaults);
        if (!review) {
          kept.push(s);
          continue;
        }
        summary.potentialDuplicates++;
        decisions.noteSubmitted(s.account.id);
        await reviews.submit(review);
        if (summary.pendingReviews.length < PENDING_REVIEWS_KEPT) summary.pendingReviews.push(review);
        this.duplicateLines.info(
          { account: s.account.name, source: s.account.sourceName, candidates: review.candidates.length },
          'Potential duplicate: the account waits for review',
        );
      }
      survivors = kept;
    }
    const items: AccountItem[] = [];
    const baseline: MatchRecord[] = [];
    const madeFrom: string[] = [];
    for (const s of survivors) {
      const item = this.d.items.create(s.account, s.merged);
      items.push(item);
      if (matcher) {
        this.d.createdKeys.add(item.identity);
        this.d.reviewDefaults.directory?.add(item.identity, s.account.name, s.merged);
        baseline.push({ id: item.identity, attributes: s.merged });
        madeFrom.push(s.account.id);
      }
    }
    // Later batches must see this run's new accounts as potential duplicates too.
    matcher?.addBaseline(baseline, madeFrom);
    return items;
  }
}
