/**
 * A rules run's batches decided in partitions (issue 27). The run streams its batches as usual until
 * it has read `minAccounts` new accounts; from then on it holds them (new accounts packed) until every
 * source is read, since a partition plan needs every account. Then the partitions decide the held new
 * accounts in threads (planned-matcher.ts), and the run processes the held batches, in order, as they
 * come back: the same batches with the same decisions, so the same items, unique values and forms as
 * a run in one thread (derived keys: the partitions name the accounts they create as the run does).
 */
import type { FusionConfig } from '../config/fusion-config';
import type { CoreDeps } from '../core-deps';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import { defaultParallelism, partitionThreadsAllowed } from '../matching/parallel/parallelism';
import type { Logger } from '../ports/logger';
import { plannable } from '../matching/partition-plan';
import { matchedAttributes, mergedAlone } from './account-items';
import type { Batch } from './batch-processor';
import type { ExistingAccount } from './connector-account-index';
import type { PartitionAccount } from './partition-decisions';
import { RecordPacker, type PackedAccount } from './packed-account';
import type { DerivedKeys } from './derived-key';
import { PlannedMatcher } from './planned-matcher';
import { partitionThreadsAvailable } from './partition-thread';
import type { ReviewDecisions } from './review-decisions';

interface HeldBatch {
  fresh: PackedAccount[];
  ready: ExistingAccount[];
}

export class PartitionedBatches {
  private readonly packer = new RecordPacker();
  /** Undefined until the run holds its batches. */
  private held: HeldBatch[] | undefined;
  private freshRead = 0;

  constructor(
    private readonly config: FusionConfig,
    private readonly matcher: PlannedMatcher,
    private readonly decisions: ReviewDecisions,
    /** New accounts read before the run holds its batches: fewer are not worth the partitions' threads. */
    private readonly minAccounts: number,
    /** Partitions (threads) for so many records (baseline and new accounts). */
    private readonly partsFor: (records: number) => number,
    private readonly logger: Logger,
  ) {}

  /** Whether the run holds this batch (it is then processed after the partitions decide it). */
  holds(batch: Batch): boolean {
    if (!this.held) {
      this.freshRead += batch.fresh.length;
      if (this.freshRead < this.minAccounts) return false;
      this.held = [];
    }
    if (batch.fresh.length > 0 || batch.ready.length > 0)
      this.held.push({ fresh: batch.fresh.map((a) => this.packer.packAccount(a)), ready: batch.ready });
    return true;
  }

  /** The held batches once the partitions are started (none when the run held none), in order. */
  async *release(): AsyncIterable<Batch> {
    const held = this.held;
    if (!held) {
      this.matcher.dropHeld();
      return;
    }
    this.held = undefined;
    const accounts: PartitionAccount[] = [];
    held.forEach((b, batch) => {
      for (const p of b.fresh) {
        const a = this.packer.unpackAccount(p);
        accounts.push({
          id: a.id,
          ...(a.identityId ? { identityId: a.identityId } : {}),
          attributes: matchedAttributes(this.config.matching, mergedAlone(this.config, a)),
          batch,
          ...(this.decisions.skipsMatching(a.id) ? { skipsMatching: true } : {}),
        });
      }
    });
    const count = accounts.length;
    const threads = await this.matcher.start(accounts, this.partsFor);
    accounts.length = 0;
    if (threads === undefined)
      this.logger.info(
        { accounts: count },
        `Matching ${count} new accounts in the run's own thread: the memory limit leaves no room for partitions`,
      );
    else
      this.logger.info(
        { partitions: threads, accounts: count },
        `Matching ${count} new accounts in ${threads} partitions`,
      );
    for (let i = 0; i < held.length; i++) {
      const b = held[i]!;
      // Processed batches go: the held run weighs what its batches still to come weigh.
      held[i] = { fresh: [], ready: [] };
      yield { fresh: b.fresh.map((p) => this.packer.unpackAccount(p)), ready: b.ready };
    }
    this.matcher.finish();
  }
}

/**
 * The run's matcher and, where the run may decide its batches in partitions (MatchingParallelism.partitions),
 * the batches that hold them. The matcher then wraps a usual matcher of one thread: until the run holds
 * its batches it matches few new accounts, which further threads' copies of the baseline would not pay
 * for. No partitions where they cannot give the same decisions (the probabilistic model, no mandatory
 * attribute with lossless keys), where matching goes to child jobs (queue mode), and where there is
 * one thread or no worker entry (the connector's bundle).
 */
export function partitionedRun(
  config: FusionConfig,
  deps: CoreDeps,
  build: (oneThread: boolean) => AsyncMatcher,
  keys: DerivedKeys,
  decisions: ReviewDecisions,
  logger: Logger,
  signal: AbortSignal,
): { matcher: AsyncMatcher; batches?: PartitionedBatches } {
  const { threads, minRecords, memoryLimit, threadCost, partitions } = deps.matchingParallelism ?? defaultParallelism();
  const parts = Math.floor(threads);
  const eligible =
    partitions === true &&
    config.matching.model !== 'probabilistic' &&
    plannable(config.matching) &&
    deps.matchingShards === undefined &&
    parts >= 2 &&
    partitionThreadsAvailable();
  if (!eligible) return { matcher: build(false) };
  const partsFor = (records: number): number =>
    memoryLimit === undefined ? parts : Math.min(parts, partitionThreadsAllowed(records, memoryLimit, threadCost));
  const planned = new PlannedMatcher(config.matching, keys, build(true), signal, deps.startPartition);
  return {
    matcher: planned,
    batches: new PartitionedBatches(config, planned, decisions, minRecords, partsFor, logger),
  };
}
