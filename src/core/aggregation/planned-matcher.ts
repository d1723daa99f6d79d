/**
 * The matcher of a run whose later batches are decided in partitions (partitioned-batches.ts). Until
 * the run starts holding its batches it is the run's usual matcher (`inner`), and it keeps a copy of
 * every baseline record (the matching attributes only): identities and the accounts created so far.
 * Then start() plans the partitions over that baseline and the held accounts, and one thread per
 * partition decides its accounts (partition-decisions.ts), reporting batch by batch. From there on
 * match() answers each batch with what the partitions found, as soon as they all got that far, and
 * addBaseline() checks that the run created exactly the accounts the partitions created (the
 * candidate ids they gave later accounts).
 */
import { FusionError } from '../errors';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import { recordMatchingStats } from '../matching/metrics';
import { emptyStats } from '../matching/slice-finish';
import type { MatchOptions, MatchRecord, MatchResult, MatchingSettings, PotentialDuplicate } from '../matching/types';
import type { DerivedKeys } from './derived-key';
import { RecordPacker, type Packed } from './packed-account';
import { partitionRun, type BatchDecisions, type PartitionAccount } from './partition-decisions';
import { startPartitionThread, type PartitionThread, type StartPartition } from './partition-thread';

interface Waiting {
  ids: readonly string[];
  resolve: () => void;
  reject: (e: Error) => void;
}

export class PlannedMatcher implements AsyncMatcher {
  private readonly attributes: readonly string[];
  /** The baseline so far (matching attributes only, packed), until start() hands it to the partitions. */
  private held: Packed<MatchRecord>[] | undefined = [];
  private readonly packer = new RecordPacker();
  /** Per account decided and not yet matched: its potential duplicates (null: none). */
  private readonly decided = new Map<string, PotentialDuplicate[] | null>();
  /** Accounts the partitions created and the run has not yet (addBaseline's check). */
  private readonly created = new Set<string>();
  private threads: PartitionThread[] = [];
  private running = 0;
  private waiting: Waiting | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly settings: MatchingSettings,
    private readonly keys: DerivedKeys,
    /** The run's usual matcher, for the batches before start(). */
    private inner: AsyncMatcher | undefined,
    private readonly startPartition: StartPartition = startPartitionThread,
  ) {
    this.attributes = settings.attributes.map((a) => a.attribute);
  }

  addBaseline(records: Iterable<MatchRecord>, foreseen?: readonly string[]): void {
    if (this.inner) {
      const list = [...records];
      this.inner.addBaseline(list, foreseen);
      if (this.held)
        for (const r of list)
          this.held.push(this.packer.pack({ id: r.id, attributes: this.matchingOnly(r.attributes) }));
      return;
    }
    // The accounts the run created from this batch: the partitions must have created the same ones.
    for (const id of foreseen ?? []) {
      if (!this.created.delete(id))
        throw new Error(`partitioned matching: the run created an account for ${id}, which its partition did not`);
    }
  }

  /** The attributes a partition's matcher reads: the rest of an identity's or account's attributes stays here. */
  matchingOnly(attributes: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const a of this.attributes) if (attributes[a] !== undefined) out[a] = attributes[a];
    return out;
  }

  /**
   * The run's remaining new accounts, in its order with its batches: the partitions start (as many as
   * `partsFor` allows for the records to hold, one thread each) and the usual matcher ends. Fewer than
   * 2: the usual matcher goes on alone. Returns the partitions started.
   */
  async start(accounts: readonly PartitionAccount[], partsFor: (records: number) => number): Promise<number> {
    const held = this.held!;
    this.held = undefined;
    const parts = partsFor(held.length + accounts.length);
    if (parts < 2) return 0;
    const planned = partitionRun(
      this.settings,
      held.map((p) => this.packer.unpack(p)),
      accounts,
      parts,
    );
    if (!planned) throw new Error('partitioned matching: the settings give no partition plan');
    const inner = this.inner!;
    this.inner = undefined;
    await inner.close();
    for (const input of planned.inputs) {
      if (input.accounts.length === 0) continue;
      this.running++;
      this.threads.push(
        this.startPartition(
          { settings: this.settings, namespace: this.keys.namespaceId, input },
          (d) => this.decide(d),
          (e) => this.ended(e),
        ),
      );
    }
    return parts;
  }

  async match(newRecords: readonly MatchRecord[], opts?: MatchOptions): Promise<MatchResult> {
    if (this.inner) return this.inner.match(newRecords, opts);
    const ids = newRecords.map((r) => r.id);
    if (!this.ready(ids)) {
      await new Promise<void>((resolve, reject) => {
        this.waiting = { ids, resolve, reject };
        this.wake();
      });
    }
    const duplicates = new Map<string, PotentialDuplicate[]>();
    for (const id of ids) {
      const found = this.decided.get(id);
      this.decided.delete(id);
      if (found) duplicates.set(id, found);
    }
    const stats = emptyStats();
    stats.accounts = ids.length;
    stats.accountsWithDuplicates = duplicates.size;
    return { duplicates, stats };
  }

  private ready(ids: readonly string[]): boolean {
    for (const id of ids) if (!this.decided.has(id)) return false;
    return true;
  }

  private decide(d: BatchDecisions): void {
    recordMatchingStats(d.stats);
    for (const [id, found] of d.found) this.decided.set(id, found);
    for (const id of d.created) {
      this.created.add(id);
      if (!this.decided.has(id)) this.decided.set(id, null);
    }
    this.wake();
  }

  private ended(error?: Error): void {
    this.running--;
    if (error) this.failure ??= error;
    this.wake();
  }

  /**
   * Resolves the batch waiting once its accounts are decided. A failed partition fails it only once no
   * partition runs any more (the batches the others decide still go out; which partition an account
   * belongs to is not kept): then with the partition's error.
   */
  private wake(): void {
    const w = this.waiting;
    if (!w || (!this.ready(w.ids) && this.running > 0)) return;
    this.waiting = undefined;
    if (this.ready(w.ids)) w.resolve();
    else
      w.reject(this.failure ?? new Error('partitioned matching: the partitions ended without deciding every account'));
  }

  foresee(): boolean {
    return false;
  }

  async estimate(): Promise<undefined> {
    return undefined;
  }

  beginEstimate(): never {
    throw new FusionError('MATCHING_INVALID', 'partitioned matching is for the rules model: it estimates nothing');
  }

  parameters(): undefined {
    return undefined;
  }

  useParameters(): never {
    throw new FusionError('MATCHING_INVALID', 'partitioned matching is for the rules model: it takes no parameters');
  }

  async close(): Promise<void> {
    const threads = this.threads;
    this.threads = [];
    await Promise.all([this.inner?.close(), ...threads.map((t) => t.close())]);
  }
}
