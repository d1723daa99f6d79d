/**
 * A full probabilistic run's new accounts, held until every source is read so that the estimate sees
 * all of them (an estimate from the first batch alone could rest on no pair at all). They are fed to
 * the estimate as they are read, FEED_CHUNK at a time, so that its phase 1 runs while the pages are
 * fetched (estimate-feed.ts); then the run processes them in its usual batches.
 */
import type { FusionConfig } from '../config/fusion-config';
import type { EstimateFeed } from '../matching/parallel/estimate-feed';
import type { MatchRecord } from '../matching/types';
import type { PlatformAccount } from '../ports/platform';
import { matchedAttributes, mergedAlone } from './account-items';
import type { Batch } from './batch-processor';
import { RecordPacker, type PackedAccount } from './packed-account';
import type { ReviewDecisions } from './review-decisions';

/** New accounts given to the estimate at a time, while the sources are read. */
const FEED_CHUNK = 512;

export class EstimateHold {
  private readonly packer = new RecordPacker();
  private readonly held: PackedAccount[] = [];
  private feeding: MatchRecord[] = [];
  /** The estimate fed, once begun (after the review decisions: an approved account is not estimated over). */
  feed?: EstimateFeed;

  constructor(
    private readonly config: FusionConfig,
    private readonly decisions: ReviewDecisions,
  ) {}

  /**
   * Holds a new account and feeds it to the estimate, with only the attributes the matcher reads,
   * merged from the account as the batches will merge it (read back from its packed text, as they read it).
   */
  async hold(account: PlatformAccount): Promise<void> {
    const packed = this.packer.packAccount(account);
    this.held.push(packed);
    if (!this.feed) return;
    const a = this.packer.unpackAccount(packed);
    if (this.decisions.skipsMatching(a.id)) return;
    this.feeding.push({ id: a.id, attributes: matchedAttributes(this.config.matching, mergedAlone(this.config, a)) });
    await this.feedEstimate(FEED_CHUNK);
  }

  /** Gives the estimate the accounts waiting for it once there are at least `atLeast` (0: all). */
  async feedEstimate(atLeast = 0): Promise<void> {
    if (!this.feed || this.feeding.length === 0 || this.feeding.length < atLeast) return;
    const records = this.feeding;
    this.feeding = [];
    await this.feed.add(records);
  }

  /** The held accounts in batches of `size`. */
  *batches(size: number): Iterable<Batch> {
    for (let i = 0; i < this.held.length; i += size) {
      yield { fresh: this.held.slice(i, i + size).map((p) => this.packer.unpackAccount(p)), ready: [] };
    }
  }
}
