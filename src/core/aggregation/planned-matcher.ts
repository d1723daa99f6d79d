/**
 * The matcher of a run decided in partitions (issue 27), one thread each, started while the sources
 * are still read. It keeps the baseline (matching attributes only, packed) until the run has foreseen
 * enough new accounts (`minRecords` records with the baseline); then it packs the baseline's classes
 * into the partitions (partition-router.ts) and sends each batch foreseen (ReadAhead: up to 16 batches
 * before the run matches it) to the partitions of its accounts' classes (partition-decisions.ts).
 * match() answers a batch with what the partitions found as soon as they have decided it; addBaseline()
 * checks that the run creates exactly the accounts the partitions created, under the same keys.
 *
 * A run that must match a batch before it has foreseen that many records starts them all the same once
 * it has foreseen a quarter of them (it reads only 16 batches ahead: a large run against a small
 * baseline shows about 4,000 new accounts by then); a smaller run, or one whose memory limit leaves no
 * room for a partition, is matched by the usual matcher instead.
 */
import { FusionError } from '../errors';
import type { AsyncMatcher, ForeseenRecord } from '../matching/parallel/async-matcher';
import { candidatesObserver, recordMatchingStats } from '../matching/metrics';
import { PlanKeys, plannedAttributes } from '../matching/partition-plan';
import { emptyStats } from '../matching/slice-finish';
import type { MatchOptions, MatchRecord, MatchResult, MatchingSettings, PotentialDuplicate } from '../matching/types';
import type { Logger } from '../ports/logger';
import { matchedAttributes } from './account-items';
import { throwIfCancelled } from './batch-processor';
import type { DerivedKeys } from './derived-key';
import { RecordPacker, type Packed } from './packed-account';
import { decodeFound, foundAttributes } from './found-columns';
import type { BatchDecisions, PartitionAccount, PartitionWork } from './partition-decisions';
import { PartitionRouter } from './partition-router';
import { startPartitionThread, type PartitionThread, type StartPartition } from './partition-thread';

export interface PlannedMatcherOptions {
  settings: MatchingSettings;
  keys: DerivedKeys;
  /** The run's usual matcher, for a run that does not partition. */
  build: () => AsyncMatcher;
  /** Partitions (threads) the memory limit allows for so many records. */
  partsFor: (records: number) => number;
  /** Records (baseline and new accounts foreseen) from which the partitions start. */
  minRecords: number;
  /** A reviewer's "not a duplicate": the account is created without matching. */
  skipsMatching: (id: string) => boolean;
  /** The run's: a cancel ends a wait for the partitions. */
  signal: AbortSignal;
  logger: Logger;
  startPartition?: StartPartition;
  /**
   * Queue mode. 'partitions': the partitions are child jobs any worker process takes (partition-provider.ts).
   * 'forgone': matching child jobs are configured but partitions take their place as threads of this process,
   * so other worker pods (and an autoscaler counting child jobs) see none of this run. The start line says which.
   */
  childJobs?: 'partitions' | 'forgone';
}

interface Waiting {
  ids: readonly string[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** A broken promise between the run and its partitions: a bug, never a result. */
const mismatch = (what: string): Error => new Error(`partitioned matching: ${what}`);

export class PlannedMatcher implements AsyncMatcher {
  /** The baseline until the partitions start (or the usual matcher takes over). */
  private held: Packed<MatchRecord>[] | undefined = [];
  private readonly packer = new RecordPacker();
  private inner: AsyncMatcher | undefined;
  /** Batches foreseen before the partitions started. */
  private pending: ForeseenRecord[][] = [];
  private foreseen = 0;
  private router: PartitionRouter | undefined;
  private planKeys: PlanKeys | undefined;
  private nextBatch = 0;
  /** foresee() said true: it must go on saying so (the run reads ahead from then on). */
  private foreseeing = false;
  /** The batches sent to the partitions and not yet matched by the run (their accounts' ids). */
  private readonly routed: string[][] = [];
  /** The batch the run matched last, until its accounts are created. */
  private current: readonly string[] = [];
  /** Per account decided and not yet matched or created: its potential duplicates (null: none). */
  private readonly decided = new Map<string, PotentialDuplicate[] | null>();
  /** Accounts the partitions created and the run has not yet. */
  private readonly created = new Set<string>();
  private readonly observers = new Map<string, (k: number) => void>();
  /** Per partition: the last batch it decided. */
  private readonly lastDecided: number[] = [];
  private threads: PartitionThread[] = [];
  private waiting: Waiting | undefined;
  private failure: Error | undefined;
  /** The other partitions being stopped after one failed: close() waits for them. */
  private stopping: Promise<void> | undefined;
  /** The matching attributes in the settings' order (found-columns.ts). */
  private readonly attributes: string[];

  constructor(private readonly o: PlannedMatcherOptions) {
    this.attributes = foundAttributes(o.settings);
  }

  addBaseline(records: Iterable<MatchRecord>, foreseen?: readonly string[]): void {
    if (this.inner) return this.inner.addBaseline(records, foreseen);
    if (this.held) {
      for (const r of records) this.held.push(this.packer.pack(this.matched(r)));
      // Enough baseline already: the partitions start now and prepare it while the rest is read.
      if (!this.foreseeing && this.held.length >= this.o.minRecords && this.o.partsFor(this.held.length) >= 1)
        this.start();
      return;
    }
    // Baseline read after the partitions started (the run foresees accounts only once it is read).
    if (!this.foreseeing) {
      const baseline = [...records].map((r) => this.matched(r));
      return this.send(this.nextBatch++, baseline, 'baseline');
    }
    // The accounts the run created from its last batch: the partitions must have created the same ones.
    const list = [...records];
    if (foreseen?.length !== list.length) throw mismatch('the run added baseline records that no account made');
    list.forEach((r, i) => {
      const id = foreseen[i]!;
      if (!this.created.delete(id)) throw mismatch(`the run created an account for ${id}, which its partition did not`);
      if (r.id !== this.o.keys.keyOf(id)) throw mismatch(`the run gave the account made from ${id} another key`);
    });
    for (const id of this.current) {
      if (this.created.has(id)) throw mismatch(`its partition created an account for ${id}, which the run did not`);
      this.decided.delete(id);
    }
    this.current = [];
  }

  /** What a partition keeps of a baseline record: the matching attributes only. */
  private matched(r: MatchRecord): MatchRecord {
    const attributes = matchedAttributes(this.o.settings, r.attributes);
    // Its directory row goes with it: the partitions name it beside the id of a candidate they find.
    return r.ref === undefined ? { id: r.id, attributes } : { id: r.id, attributes, ref: r.ref };
  }

  foresee(records: readonly ForeseenRecord[]): boolean {
    if (this.inner) return this.foreseeing;
    if (!this.router && !this.foreseeing && this.o.partsFor(this.held!.length) < 1) {
      this.noRoom();
      return false;
    }
    if (this.router) this.route(records);
    else {
      this.pending.push([...records]);
      this.foreseen += records.length;
      if (this.held!.length + this.foreseen >= this.o.minRecords) this.start();
    }
    return (this.foreseeing = true);
  }

  async match(newRecords: readonly MatchRecord[], opts?: MatchOptions): Promise<MatchResult> {
    if (!this.inner && !this.router) {
      if (this.held!.length + this.foreseen >= this.o.minRecords / 4) this.start();
      else this.useInner();
    }
    if (this.inner) return this.inner.match(newRecords, opts);
    const ids = this.routed.shift();
    if (!ids) throw mismatch('the run matched accounts it did not foresee');
    if (!this.ready(ids)) await this.wait(ids);
    this.current = ids;
    const duplicates = new Map<string, PotentialDuplicate[]>();
    for (const r of newRecords) {
      const found = this.decided.get(r.id);
      if (found === undefined) throw mismatch(`the run matched ${r.id} out of the order it foresaw`);
      if (found) duplicates.set(r.id, found);
    }
    const stats = emptyStats();
    stats.accounts = newRecords.length;
    stats.accountsWithDuplicates = duplicates.size;
    return { duplicates, stats };
  }

  private noRoom(): void {
    this.o.logger.info("Matching in the run's own thread: the memory limit leaves no room for partitions");
    this.useInner();
  }

  /** The usual matcher over the baseline held: the run matches before it has foreseen enough accounts. */
  private useInner(): void {
    const inner = (this.inner = this.o.build());
    inner.addBaseline(this.held!.map((p) => this.packer.unpack(p)));
    this.held = undefined;
    this.pending = [];
  }

  /** Plans the partitions over the baseline, starts their threads and sends them the batches foreseen. */
  private start(): void {
    const parts = this.o.partsFor(this.held!.length + this.foreseen);
    if (parts < 1) return this.noRoom();
    const held = this.held!;
    this.held = undefined;
    // Each packed record goes as soon as it is unpacked: the two forms are never both whole.
    const baseline: MatchRecord[] = [];
    for (let i = 0; i < held.length; i++) {
      baseline.push(this.packer.unpack(held[i]!));
      held[i] = '' as Packed<MatchRecord>;
    }
    // By the attribute whose partitions come out most even (a mandatory attribute with lossless keys).
    for (const attribute of plannedAttributes(this.o.settings)) {
      const planKeys = new PlanKeys(this.o.settings, attribute);
      const router = new PartitionRouter(parts, planKeys.of(baseline));
      if (!this.router || Math.max(...router.loads) < Math.max(...this.router.loads)) {
        this.router = router;
        this.planKeys = planKeys;
      }
    }
    const router = this.router;
    if (!router) throw mismatch('the settings give no partition plan');
    const start = this.o.startPartition ?? startPartitionThread;
    // One pass over the baseline, not one per partition (15 over 1M records on 16 cores). A record
    // without a key (-1) goes nowhere: no account can match it.
    const mine = Array.from({ length: parts }, (): MatchRecord[] => []);
    baseline.forEach((r, i) => {
      const p = router.baselinePartitionOf[i]!;
      if (p < 0) return;
      const list = mine[p];
      if (!list) throw mismatch(`the plan placed a record in partition ${p} of ${parts}`);
      list.push(r);
    });
    for (let p = 0; p < parts; p++) {
      this.threads.push(
        start(
          {
            settings: this.o.settings,
            namespace: this.o.keys.namespaceId,
            attribute: this.planKeys!.attribute,
            baseline: mine[p]!,
          },
          {
            decided: (d) => this.decide(p, d),
            exported: (to, batch, records) => this.threads[to]?.import(batch, records),
          },
          (e) => this.ended(e),
        ),
      );
    }
    const named = `${parts} partition${parts === 1 ? '' : 's'}`;
    const { childJobs } = this.o;
    const where =
      childJobs === 'forgone'
        ? " (threads of this process: no matching child jobs, so other workers do not share this run's matching)"
        : childJobs === 'partitions'
          ? ' (child jobs that any worker process takes)'
          : '';
    this.o.logger.info(
      { partitions: parts, ...(childJobs ? { childJobs: childJobs === 'partitions' } : {}) },
      `Matching new accounts in ${named} as the sources are read${where}`,
    );
    for (const batch of this.pending) this.route(batch);
    this.pending = [];
  }

  /** Sends a batch's accounts to their partitions, with the classes that move first. */
  private route(records: readonly ForeseenRecord[]): void {
    const batch = this.nextBatch++;
    if (records.length === 0) return;
    const { settings, skipsMatching } = this.o;
    const accounts = records.map((r): PartitionAccount => ({
      id: r.id,
      ...(r.identityId ? { identityId: r.identityId } : {}),
      attributes: matchedAttributes(settings, r.attributes),
      ...(skipsMatching(r.id) ? { skipsMatching: true } : {}),
    }));
    this.send(batch, accounts, 'accounts');
    this.routed.push(accounts.map((a) => a.id));
  }

  /** A batch's accounts, or baseline records, to their classes' partitions, with the classes that move first. */
  private send(batch: number, records: PartitionAccount[], kind: 'accounts' | 'baseline'): void {
    // A failed partition stopped them all: the run fails now rather than at its next wait.
    if (this.failure) throw this.failure;
    const { partitionOf, moves } = this.router!.route(this.planKeys!.of(records));
    const works = this.threads.map((): PartitionWork => ({ batch, accounts: [], exports: [], imports: 0 }));
    records.forEach((r, i) => {
      const w = works[partitionOf[i]!]!;
      if (kind === 'accounts') w.accounts.push(r);
      else (w.baseline ??= []).push(r);
    });
    for (const m of moves) {
      works[m.from]!.exports.push({ to: m.to, keys: m.keys });
      works[m.to]!.imports++;
    }
    works.forEach((w, p) => {
      if (w.accounts.length > 0 || w.baseline || w.exports.length > 0 || w.imports > 0) this.threads[p]!.take(w);
    });
  }

  private wait(ids: readonly string[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const { signal } = this.o;
      const cancel = (): void => {
        this.waiting = undefined;
        try {
          throwIfCancelled({ signal });
        } catch (e) {
          reject(e);
        }
      };
      if (signal.aborted) return cancel();
      signal.addEventListener('abort', cancel, { once: true });
      const done = (): void => signal.removeEventListener('abort', cancel);
      this.waiting = {
        ids,
        resolve: () => (done(), resolve()),
        reject: (e) => (done(), reject(e)),
      };
      this.wake();
    });
  }

  private ready(ids: readonly string[]): boolean {
    for (const id of ids) if (!this.decided.has(id)) return false;
    return true;
  }

  private decide(part: number, d: BatchDecisions): void {
    // Each partition decides each batch once, in order: a batch said twice (a partition replayed in
    // another process, partition-host.ts) must never reach the run.
    if (d.batch <= (this.lastDecided[part] ?? -1))
      return this.ended(mismatch(`partition ${part} decided batch ${d.batch} again, or out of order`));
    this.lastDecided[part] = d.batch;
    recordMatchingStats(d.stats);
    for (const [label, k] of d.candidates) {
      let o = this.observers.get(label);
      if (!o) this.observers.set(label, (o = candidatesObserver(label)));
      o(k);
    }
    decodeFound(d.found, this.attributes, (id, found) => this.decided.set(id, found));
    for (const id of d.created) {
      this.created.add(id);
      if (!this.decided.has(id)) this.decided.set(id, null);
    }
    this.wake();
  }

  /** A partition failed: the run fails at the batch waiting for it, and the other partitions are stopped. */
  private ended(error: Error): void {
    if (!this.failure) {
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
    } else if (this.failure) {
      this.waiting = undefined;
      w.reject(this.failure);
    }
  }

  private async stopThreads(): Promise<void> {
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => t.close()));
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
    const router = this.router;
    if (router && !this.failure && this.threads.length > 0)
      this.o.logger.info(
        { partitions: router.parts, records: router.loads, classesMoved: router.moved.classes },
        `Partitions decided the run's new accounts; ${router.moved.classes} classes moved between them`,
      );
    await Promise.all([this.inner?.close(), this.stopThreads(), this.stopping]);
  }
}
