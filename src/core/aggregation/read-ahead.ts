/**
 * Batches read ahead of the one processed, where the matcher blocks new accounts ahead (a lean owner
 * over child jobs: AsyncMatcher.foresee, foreseen-accounts.ts). The children then block a batch while
 * the owner still reads pages and processes the batches before it, instead of the owner waiting for
 * their round trip at every batch. Same batches in the same order, so the same output.
 */
import type { FusionConfig } from '../config/fusion-config';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import { mergedAlone } from './account-items';
import type { Batch, BatchProcessor } from './batch-processor';
import type { AccountItem } from './connector-account';

/** Batches read ahead of the one processed: 4,000 accounts at the default batch size, dozens of child jobs. */
const READ_AHEAD = 16;

export class ReadAhead {
  private readonly ahead: Batch[] = [];
  /** Whether the matcher blocks new accounts ahead (its first foresee() says; undefined before). */
  private foreseeing?: boolean;

  constructor(
    private readonly config: FusionConfig,
    /** Undefined: no matching, or new accounts held for an estimate: batches are processed as they come. */
    private readonly matcher: AsyncMatcher | undefined,
    private readonly batches: BatchProcessor,
  ) {}

  /** Processes this batch, or, where the matcher blocks ahead, the one READ_AHEAD batches before it. */
  async *enqueue(batch: Batch): AsyncIterable<AccountItem> {
    if (!this.foresees(batch)) {
      yield* this.batches.flush(batch);
      return;
    }
    this.ahead.push(batch);
    while (this.ahead.length > READ_AHEAD) yield* this.batches.flush(this.ahead.shift()!);
  }

  /** Processes the batches still ahead (every source is read). */
  async *drain(): AsyncIterable<AccountItem> {
    while (this.ahead.length > 0) yield* this.batches.flush(this.ahead.shift()!);
  }

  /** Tells the matcher the batch's new accounts, merged once for it and the batch; false: it does not block ahead. */
  private foresees(batch: Batch): boolean {
    if (this.foreseeing === false || !this.matcher) return false;
    const merged = batch.fresh.map((a) => mergedAlone(this.config, a));
    batch.merged = merged;
    this.foreseeing = this.matcher.foresee(
      batch.fresh.map((a, i) => ({
        id: a.id,
        attributes: merged[i]!,
        ...(a.identityId ? { identityId: a.identityId } : {}),
      })),
    );
    return this.foreseeing;
  }
}
