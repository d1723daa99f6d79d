/**
 * Matching over several shards: every shard holds the records (as shared columns of the matching
 * values), each call's new accounts are split into contiguous slices, the owner blocks the first
 * slice itself while the shards block theirs, then merges the slices in order and runs phase 2 (the
 * probabilistic model's state lives only here). The result equals one thread's, by construction:
 * phase 1 is pairwise and every shard sees the same records in the same order.
 *
 * A lean owner (remote shards, rules model) blocks no slice once its shards run and prepares none of
 * the records added from then on: it keeps their ids, which is all the rules' phase 2 reads. In queue
 * mode the owner is the one process of a run that no worker can relieve, and the shards' copies
 * already hold every prepared value. Told the run's new accounts ahead (foresee), its shards block
 * them before their calls (foreseen-accounts.ts), so a call no longer waits for the shards' round trip.
 */
import type { BlockedSlice } from '../blocked-slice';
import { buildMatchEngine, type MatchEngine } from '../matcher';
import { recordMatchingStats } from '../metrics';
import type { Steps } from '../steps';
import type {
  MatchOptions,
  MatcherOptions,
  MatchRecord,
  MatchResult,
  MatchingSettings,
  ModelParameters,
  ParameterEstimate,
} from '../types';
import type { AsyncMatcher } from './async-matcher';
import { collectingFeed, type EstimateFeed, IncrementalEstimate } from './estimate-feed';
import { ForeseenAccounts } from './foreseen-accounts';
import { APPEND_CHUNK, OWNER_CHUNK, OWNER_CHUNK_WITH_SHARDS, stepped, timeUp, turn, TURN_MS } from './loop-turns';
import { shardsPayOff } from './shard-payoff';
import { sliceBounds } from './slice-bounds';
import { encodeRecords, type RecordColumns } from './record-columns';
import type { Shard } from './shard';

export interface ParallelOptions {
  /** Shards besides the owner thread; 0: everything in-thread. */
  shards: number;
  /** Starts a shard; called when the records reach minRecords. */
  startShard: (settings: MatchingSettings) => Shard;
  /** Records (baseline + new) from which the shards are used; below, the owner matches alone. */
  minRecords: number;
  /** New accounts per slice below which a call stays in-thread; default MIN_ACCOUNTS_PER_SHARD. */
  minAccountsPerShard?: number;
  /**
   * Shards whose copies of this many records fit in memory (parallelism.ts, threadCopiesAllowed);
   * absent: `shards`, whatever the size. Checked when the shards would start and as records are
   * added: shards beyond it are closed, and none start again in this matcher.
   */
  maxShards?: (records: number) => number;
  /** Told each time maxShards lowers the shards in use (or keeps them from starting): to say why. */
  onShardsCapped?: (cap: { shards: number; wanted: number; records: number }) => void;
  /**
   * Once the shards run, the shards block every slice and the owner keeps only the ids of the records
   * added from then on (see above). Rules model only, and shards that are never capped (no maxShards):
   * a capped or failed shard could not be replaced by the owner's engine, which lacks those records.
   */
  lean?: boolean;
  /** The owner's work between two turns of the event loop; default TURN_MS (tests: 0, a turn per account). */
  turnMs?: number;
  /** The clock (ms) of turnMs and of the owner's cost per account; default performance.now. */
  now?: () => number;
}

/** Fewer new accounts than this per thread are matched in-thread: a slice would cost more to send than to block. */
export const MIN_ACCOUNTS_PER_SHARD = 16;

export function buildParallelMatcher(
  settings: MatchingSettings,
  opts: MatcherOptions,
  parallel: ParallelOptions,
): AsyncMatcher {
  return new ParallelMatcher(settings, opts, parallel);
}

class ParallelMatcher implements AsyncMatcher {
  private readonly engine: MatchEngine;
  private readonly keys = new Map<string, number>();
  private readonly intern = (id: string): number => {
    let k = this.keys.get(id);
    if (k === undefined) this.keys.set(id, (k = this.keys.size));
    return k;
  };
  /** Baseline chunks not yet given to shards (the shards start once the records reach minRecords). */
  private pending: RecordColumns[] = [];
  private shards: Shard[] | undefined;
  private closed = false;
  private busy = false;
  /** Shards the memory allows, as last checked (maxShards never grows with the records). */
  private cap: number;
  /** Shards closed because memory no longer allowed them: close() waits for them to end. */
  private readonly capped: Promise<void>[] = [];
  /** Lean owner: the id of every record, baseline first (its engine stops growing once the shards run). */
  private readonly ids: string[] = [];
  /**
   * Lean owner whose shards started (also once they are closed): its engine holds only the records
   * added before them.
   */
  private leanRunning = false;
  /** Foreseen accounts (decided at the first foresee(): false when this matcher does not block ahead). */
  private ahead: ForeseenAccounts | false | undefined;
  /** The owner's blocking per account in its last call (ms); undefined before one. */
  private msPerAccount: number | undefined;
  private readonly turnMs: number;
  private readonly now: () => number;

  constructor(
    private readonly settings: MatchingSettings,
    opts: MatcherOptions,
    private readonly parallel: ParallelOptions,
  ) {
    if (parallel.lean && (settings.model === 'probabilistic' || parallel.maxShards))
      throw new Error('ParallelMatcher: a lean owner needs the rules model and shards that are never capped');
    this.engine = buildMatchEngine(settings, opts);
    this.cap = parallel.shards;
    this.turnMs = parallel.turnMs ?? TURN_MS;
    this.now = parallel.now ?? (() => performance.now());
  }

  private get sharding(): boolean {
    return this.cap > 0 && !this.closed;
  }

  /** Records held: baseline and the new records of a call under way. */
  private get size(): number {
    return this.parallel.lean ? this.ids.length : this.engine.size;
  }

  /** Lowers the cap to what `records` records allow; true when it went down. */
  private capAt(records: number): boolean {
    const allowed = this.parallel.maxShards?.(records);
    if (allowed === undefined || allowed >= this.cap) return false;
    this.cap = Math.max(0, Math.floor(allowed));
    this.parallel.onShardsCapped?.({ shards: this.cap, wanted: this.parallel.shards, records });
    // Baseline chunks kept for shards that will never start.
    if (this.cap === 0) this.pending = [];
    return true;
  }

  addBaseline(records: Iterable<MatchRecord>, foreseen?: readonly string[]): void {
    // A call yields between chunks while its new records are appended: records added then would land among them.
    if (this.busy) throw new Error('ParallelMatcher: addBaseline during a match');
    const list = Array.isArray(records) ? (records as readonly MatchRecord[]) : [...records];
    const ahead = this.ahead;
    if (ahead) {
      // The shards hold these records already, as the foreseen accounts they were made from.
      if (foreseen?.length !== list.length)
        throw new Error('ParallelMatcher: once accounts are foreseen, only foreseen accounts join the baseline');
      list.forEach((r, i) => {
        ahead.joined(foreseen[i]!, this.ids.length);
        this.ids.push(r.id);
      });
      return;
    }
    if (this.parallel.lean) for (const r of list) this.ids.push(r.id);
    if (!this.leanRunning) this.engine.addBaseline(list);
    if (!this.sharding || list.length === 0) return;
    // Each shard's copy grows with the records: the ones memory no longer allows are closed, between calls.
    if (this.capAt(this.size)) {
      for (const s of this.shards?.splice(this.cap) ?? []) this.capped.push(s.close().catch(() => undefined));
      if (!this.sharding) return;
    }
    const cols = encodeRecords(list, this.settings.attributes, this.intern);
    // Shards prepare the baseline while the owner reads the rest of it.
    if (this.shards) for (const s of this.shards) s.addBaseline(cols);
    else this.pending.push(cols);
    this.startIfLarge(0);
  }

  /** At minRecords, or before when `costly`: a careless list's calls cost many thread starts each (shard-payoff.ts). */
  private startIfLarge(extra: number, costly = false): Shard[] | undefined {
    if (this.shards || !this.sharding || (!costly && this.size + extra < this.parallel.minRecords)) return this.shards;
    this.capAt(this.size + extra);
    if (!this.sharding) return undefined;
    const shards: Shard[] = [];
    try {
      for (let i = 0; i < this.cap; i++) shards.push(this.parallel.startShard(this.settings));
    } catch (e) {
      for (const s of shards) void s.close();
      throw e;
    }
    for (const cols of this.pending) for (const s of shards) s.addBaseline(cols);
    this.pending = [];
    this.shards = shards;
    this.leanRunning = this.parallel.lean === true;
    return shards;
  }

  parameters(): ModelParameters | undefined {
    return this.engine.parameters();
  }

  useParameters(parameters: ModelParameters): void {
    this.engine.useParameters(parameters);
  }

  /**
   * The shards to use for `count` new accounts (as many as get minAccountsPerShard each, the
   * owner's slice included), or undefined: in-thread. More shards never turn a call in-thread.
   */
  private shardsFor(count: number): Shard[] | undefined {
    const perShard = this.parallel.minAccountsPerShard ?? MIN_ACCOUNTS_PER_SHARD;
    // A lean owner blocks no slice: every slice is a shard's.
    const use = Math.min(this.cap, Math.floor(count / perShard) - (this.parallel.lean ? 0 : 1));
    if (!this.sharding) return undefined;
    // Once they run, a lean owner's shards take every call: its engine lacks the records added since.
    if (this.leanRunning) return this.shards!.slice(0, Math.max(1, use));
    if (use < 1) return undefined;
    const costly = this.msPerAccount !== undefined && shardsPayOff(count * this.msPerAccount, this.size);
    return this.startIfLarge(count, costly)?.slice(0, use);
  }

  foresee(records: readonly MatchRecord[]): boolean {
    if (this.busy) throw new Error('ParallelMatcher: foresee during a match');
    if (this.closed && this.ahead) throw new Error('ParallelMatcher: a lean owner foresees nothing after close()');
    // Only a lean owner whose shards run: the others block in the call; and only where a blocked
    // candidate never depends on the records in between (lossless generators).
    if (this.ahead === undefined && this.parallel.lean) this.startIfLarge(records.length);
    this.ahead ??=
      this.leanRunning &&
      this.sharding &&
      this.engine.blockingLossless &&
      new ForeseenAccounts(this.size, this.shards!);
    if (!this.ahead || records.length === 0) return this.ahead !== false;
    const cols = encodeRecords(records, this.settings.attributes, this.intern);
    for (const s of this.shards!) s.addBaseline(cols);
    const ids = records.map((r) => r.id);
    this.ahead.blockAhead(ids);
    return true;
  }

  async match(newRecords: readonly MatchRecord[], opts: MatchOptions = {}): Promise<MatchResult> {
    // The in-thread path below would append to the records of a call (or an estimate's feed) under way.
    if (this.busy) throw new Error('ParallelMatcher: one match at a time');
    if (this.closed && this.leanRunning) throw new Error('ParallelMatcher: a lean owner matches nothing after close()');
    const topK = opts.topK ?? this.settings.reviewTopK;
    const ahead = this.ahead;
    if (ahead) {
      const ids = newRecords.map((r) => r.id);
      return this.leanCall(newRecords, topK, async (B, prepared) => {
        prepared();
        return [await ahead.callSlice(ids, B, this.settings.attributes.length)];
      });
    }
    const shards = this.shardsFor(newRecords.length);
    if (shards && this.leanRunning)
      return this.leanCall(newRecords, topK, (_, prepared) => this.blockInCall(shards, newRecords, prepared));
    const t0 = performance.now();
    const result = await this.sharded(shards ?? [], newRecords, topK, false, t0);
    recordMatchingStats(result.stats);
    return result;
  }

  async estimate(newRecords: readonly MatchRecord[]): Promise<ParameterEstimate | undefined> {
    if (this.settings.model !== 'probabilistic' || this.engine.parameters()) return undefined;
    const shards = this.shardsFor(newRecords.length);
    const { stats } = await this.sharded(shards ?? [], newRecords, 0, true, performance.now());
    const parameters = this.engine.parameters();
    if (!parameters) return undefined;
    return { parameters, accounts: newRecords.length, candidatePairs: stats.pairs.matched };
  }

  beginEstimate(): EstimateFeed {
    // With shards too, the owner blocks the estimate's accounts itself as the pages come: on a tenant the
    // pages arrive at the platform's rate limit, so that work fills the wait, where the shards could start
    // only after the last page (its first item then waited for phase 1 over every account). Its engine
    // holds every record (a lean owner is rules-only), and the shards take the batches after it.
    const oneCall = this.settings.model !== 'probabilistic' || this.engine.parameters();
    if (oneCall) return collectingFeed((records) => this.estimate(records));
    if (this.busy) throw new Error('ParallelMatcher: one match at a time');
    this.busy = true;
    return new IncrementalEstimate({
      engine: this.engine,
      release: () => (this.busy = false),
      turn,
      stepped: (steps) => this.step(steps),
      stopAfter: () => timeUp(this.turnMs, this.now),
      appendChunk: APPEND_CHUNK,
      blockChunk: OWNER_CHUNK,
    });
  }

  private async sharded(
    shards: Shard[],
    newRecords: readonly MatchRecord[],
    topK: number,
    estimateOnly: boolean,
    t0: number,
  ): Promise<MatchResult> {
    if (this.busy) throw new Error('ParallelMatcher: one match at a time');
    this.busy = true;
    const count = newRecords.length;
    const B = this.engine.appendNew(newRecords.slice(0, APPEND_CHUNK));
    try {
      // The rest in chunks, a turn between: the records and indexes end as one append leaves them.
      for (let a = APPEND_CHUNK; a < count; a += APPEND_CHUNK) {
        await turn();
        this.engine.appendMoreNew(newRecords.slice(a, a + APPEND_CHUNK));
      }
      const bounds = sliceBounds(count, shards.length + 1);
      const t1 = performance.now();
      const cols = shards.length > 0 ? encodeRecords(newRecords, this.settings.attributes, this.intern) : undefined;
      const remote = shards.map((s, i) => s.block(cols!, bounds[i + 1]!, bounds[i + 2]!));
      // Every promise gets a handler now: one failing while the owner blocks must not go unhandled.
      const settled = Promise.allSettled(remote);
      let own: BlockedSlice[];
      try {
        own = await this.blockOwn(B, bounds[0]!, bounds[1]!, shards.length > 0 ? OWNER_CHUNK_WITH_SHARDS : OWNER_CHUNK);
      } finally {
        await settled;
      }
      const slices = [...own, ...(await Promise.all(remote))];
      const result = await this.step(this.engine.finishSlices(B, count, slices, topK, estimateOnly));
      result.stats.buildMs = t1 - t0;
      result.stats.matchMs = performance.now() - t1;
      return result;
    } finally {
      this.engine.dropNew(B);
      this.busy = false;
    }
  }

  /**
   * A lean owner's call: the shards block every slice, in the call or ahead of it (`blocked` gets the
   * call's B and says when the call's own records are prepared); phase 2 reads the ids alone.
   */
  private async leanCall(
    newRecords: readonly MatchRecord[],
    topK: number,
    blocked: (B: number, prepared: () => void) => Promise<BlockedSlice[]>,
  ): Promise<MatchResult> {
    this.busy = true;
    const t0 = performance.now();
    let t1 = t0;
    const B = this.ids.length;
    try {
      const slices = await blocked(B, () => (t1 = performance.now()));
      for (const r of newRecords) this.ids.push(r.id);
      const result = await this.step(this.engine.finishSlices(B, newRecords.length, slices, topK, false, this.ids));
      result.stats.buildMs = t1 - t0;
      result.stats.matchMs = performance.now() - t1;
      recordMatchingStats(result.stats);
      return result;
    } finally {
      this.ids.length = B;
      this.busy = false;
    }
  }

  /** A lean call's slices blocked by the shards in the call. */
  private async blockInCall(
    shards: Shard[],
    newRecords: readonly MatchRecord[],
    prepared: () => void,
  ): Promise<BlockedSlice[]> {
    const bounds = sliceBounds(newRecords.length, shards.length);
    const cols = newRecords.length > 0 ? encodeRecords(newRecords, this.settings.attributes, this.intern) : undefined;
    prepared();
    const remote = cols ? shards.map((s, i) => s.block(cols, bounds[i]!, bounds[i + 1]!)) : [];
    // Every child ends before the call does, also when one fails: the next call must not overtake them.
    await Promise.allSettled(remote);
    return Promise.all(remote);
  }

  /**
   * The owner's slice in chunks (`chunk` accounts, turnMs at most), a turn after each: the run lock's renewal waits
   * no longer. Its cost per account decides whether shards pay off below minRecords.
   */
  private async blockOwn(B: number, from: number, to: number, chunk: number): Promise<BlockedSlice[]> {
    const slices: BlockedSlice[] = [];
    const now = this.now;
    let spent = 0;
    for (let a = from; a < to;) {
      const t = now();
      const slice = this.engine.blockSlice(B, a, Math.min(to, a + chunk), timeUp(this.turnMs, now));
      spent += now() - t;
      slices.push(slice);
      a += slice.count;
      await turn();
    }
    if (to > from) this.msPerAccount = spent / (to - from);
    return slices;
  }

  /** Phase 2's steps at this matcher's turn and clock. */
  private step<T>(steps: Steps<T>): Promise<T> {
    return stepped(steps, this.turnMs, this.now);
  }

  async close(): Promise<void> {
    this.closed = true;
    const shards = this.shards ?? [];
    this.shards = undefined;
    this.pending = [];
    await Promise.all([...shards.map((s) => s.close()), ...this.capped]);
  }
}
