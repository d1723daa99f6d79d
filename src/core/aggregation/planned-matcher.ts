/**
 * The matcher of a run whose later batches are decided in partitions (partitioned-batches.ts). Until
 * the run starts holding its batches it is the run's usual matcher (`inner`), and it keeps a copy of
 * every baseline record (the matching attributes only): identities and the accounts created so far.
 * Then start() plans the partitions over that baseline and the held accounts, and one thread per
 * partition decides its accounts (partition-decisions.ts), reporting batch by batch. From there on
 * match() answers each batch with what the partitions found, as soon as they all got that far, and
 * addBaseline() checks that the run creates exactly the accounts the partitions created, under the
 * same keys (the candidate ids they gave later accounts); finish() that none is left over.
 */
import { FusionError } from '../errors';
import type { AsyncMatcher } from '../matching/parallel/async-matcher';
import { candidatesObserver, recordMatchingStats } from '../matching/metrics';
import { emptyStats } from '../matching/slice-finish';
import type { MatchOptions, MatchRecord, MatchResult, MatchingSettings, PotentialDuplicate } from '../matching/types';
import { matchedAttributes } from './account-items';
import { throwIfCancelled } from './batch-processor';
import type { DerivedKeys } from './derived-key';
import { RecordPacker, type Packed } from './packed-account';
import { partitionRun, type BatchDecisions, type PartitionAccount } from './partition-decisions';
import { startPartitionThread, type PartitionThread, type StartPartition } from './partition-thread';

interface Waiting {
  ids: readonly string[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** A broken promise between the run and its partitions: a bug, never a result. */
const mismatch = (what: string): Error => new Error(`partitioned matching: ${what}`);

export class PlannedMatcher implements AsyncMatcher {
  /** The baseline so far (matching attributes only, packed), until start() hands it to the partitions. */
  private held: Packed<MatchRecord>[] | undefined = [];
  private readonly packer = new RecordPacker();
  /** Per account decided and not yet matched or created: its potential duplicates (null: none). */
  private readonly decided = new Map<string, PotentialDuplicate[] | null>();
  /** Accounts the partitions created and the run has not yet. */
  private readonly created = new Set<string>();
  private readonly observers = new Map<string, (k: number) => void>();
  private threads: PartitionThread[] = [];
  private running = 0;
  private waiting: Waiting | undefined;
  private failure: Error | undefined;
  /** The other partitions being stopped after one failed: close() waits for them. */
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly settings: MatchingSettings,
    private readonly keys: DerivedKeys,
    /** The run's usual matcher, for the batches before start(). */
    private inner: AsyncMatcher | undefined,
    /** The run's: a cancel ends a wait for the partitions. */
    private readonly signal: AbortSignal,
    private readonly startPartition: StartPartition = startPartitionThread,
  ) {}

  addBaseline(records: Iterable<MatchRecord>, foreseen?: readonly string[]): void {
    if (this.inner) {
      const list = [...records];
      this.inner.addBaseline(list, foreseen);
      if (this.held)
        for (const r of list)
          this.held.push(this.packer.pack({ id: r.id, attributes: matchedAttributes(this.settings, r.attributes) }));
      return;
    }
    // The accounts the run created from this batch: the partitions must have created the same ones.
    const list = [...records];
    if (foreseen?.length !== list.length) throw mismatch('the run added baseline records that no account made');
    list.forEach((r, i) => {
      const id = foreseen[i]!;
      if (!this.created.delete(id)) throw mismatch(`the run created an account for ${id}, which its partition did not`);
      if (r.id !== this.keys.keyOf(id)) throw mismatch(`the run gave the account made from ${id} another key`);
      this.decided.delete(id);
    });
  }

  /** No partition will start (the run held no batch): the baseline's copy goes. */
  dropHeld(): void {
    this.held = undefined;
  }

  /**
   * The run's remaining new accounts, in its order with its batches: the partitions start (as many as
   * `partsFor` allows for the records to hold, one thread each) and the usual matcher ends. Fewer than
   * 2: the usual matcher goes on alone (undefined). Returns the threads started (partitions with accounts).
   */
  async start(
    accounts: readonly PartitionAccount[],
    partsFor: (records: number) => number,
  ): Promise<number | undefined> {
    const held = this.held!;
    this.held = undefined;
    const parts = partsFor(held.length + accounts.length);
    if (parts < 2) return undefined;
    const planned = partitionRun(
      this.settings,
      held.map((p) => this.packer.unpack(p)),
      accounts,
      parts,
    );
    if (!planned) throw mismatch('the settings give no partition plan');
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
    return this.threads.length;
  }

  async match(newRecords: readonly MatchRecord[], opts?: MatchOptions): Promise<MatchResult> {
    if (this.inner) return this.inner.match(newRecords, opts);
    const ids = newRecords.map((r) => r.id);
    if (!this.ready(ids)) {
      await new Promise<void>((resolve, reject) => {
        const cancel = (): void => {
          this.waiting = undefined;
          try {
            throwIfCancelled({ signal: this.signal });
          } catch (e) {
            reject(e);
          }
        };
        if (this.signal.aborted) return cancel();
        this.signal.addEventListener('abort', cancel, { once: true });
        const done = (): void => this.signal.removeEventListener('abort', cancel);
        this.waiting = {
          ids,
          resolve: () => (done(), resolve()),
          reject: (e) => (done(), reject(e)),
        };
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

  /** Every held batch processed: the run created every account the partitions created. */
  finish(): void {
    if (this.created.size > 0)
      throw mismatch(`${this.created.size} account(s) its partitions created were not created by the run`);
  }

  private ready(ids: readonly string[]): boolean {
    for (const id of ids) if (!this.decided.has(id)) return false;
    return true;
  }

  private decide(d: BatchDecisions): void {
    recordMatchingStats(d.stats);
    for (const [label, k] of d.candidates) {
      let o = this.observers.get(label);
      if (!o) this.observers.set(label, (o = candidatesObserver(label)));
      o(k);
    }
    for (const [id, found] of d.found) this.decided.set(id, found);
    for (const id of d.created) {
      this.created.add(id);
      if (!this.decided.has(id)) this.decided.set(id, null);
    }
    this.wake();
  }

  /** A partition's end; a failed one fails the run: the other partitions are stopped. */
  private ended(error?: Error): void {
    this.running--;
    if (error && !this.failure) {
      this.failure = error;
      this.stopping = this.stopThreads();
    }
    this.wake();
  }

  /** Resolves the batch waiting once its accounts are decided; rejects it once they cannot be. */
  private wake(): void {
    const w = this.waiting;
    if (!w) return;
    if (this.ready(w.ids)) {
      this.waiting = undefined;
      w.resolve();
    } else if (this.failure || this.running === 0) {
      this.waiting = undefined;
      w.reject(this.failure ?? mismatch('the partitions ended without deciding every account'));
    }
  }

  private async stopThreads(): Promise<void> {
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => t.close()));
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
    await Promise.all([this.inner?.close(), this.stopThreads(), this.stopping]);
  }
}
