/**
 * A lean owner's accounts blocked ahead. The aggregation tells the matcher its next new accounts, in
 * run order, before it matches them (foresee); the shards append them to their records and block
 * each against every record before it, long before its call. Which of those earlier accounts a call
 * may see is decided only as the run goes (an account sent to review never joins the baseline), so a
 * call keeps, of each account's blocked candidates: the baseline the shards held when foreseeing
 * began, the foreseen accounts that joined the baseline before this call, and the accounts before it
 * in this call; it drops the rest (later reviews, accounts still to come) and renumbers the kept ones
 * as the owner numbers its records.
 *
 * The result is the slice a call in order would have got, because a blocked candidate depends only
 * on the two records of the pair when every generator is lossless (the rules model with lossless
 * indexes: ParallelMatcher checks): records added in between only add candidates, which the filter
 * drops. What differs is the work counted in the stats: candidates compared and pairs by outcome
 * include the pairs with accounts the call does not see, because the shards did compare them.
 *
 * To keep that waste small, each call tells the shards which accounts of the call before it never
 * joined the baseline (sent to review): from then on they are no shard's candidate (Shard.exclude).
 * Blocks already done or under way keep them, so how much is saved depends on timing; what a call
 * keeps does not, since the filter drops those accounts anyway.
 */
import { type BlockedSlice, GrowingFloat64, GrowingInt32 } from '../blocked-slice';
import { sliceBounds } from './slice-bounds';
import type { Shard } from './shard';

/** Foreseen accounts per shard job at least: fewer go to fewer shards. */
const AHEAD_MIN = 64;

interface AheadChunk {
  /** Foreseen accounts start..end-1. */
  start: number;
  end: number;
  slice: Promise<BlockedSlice>;
  /** Its pairs by outcome went into a call's stats. */
  counted: boolean;
}

export class ForeseenAccounts {
  /** Foreseen accounts not yet matched or joined, by id. */
  private readonly number = new Map<string, number>();
  /** The last call's accounts, by id: they may join the baseline after it. */
  private lastCall = new Map<string, number>();
  /** Per foreseen account: its record number in the owner's numbering once it joined the baseline, else -1. */
  private joinedAt = new Int32Array(1024).fill(-1);
  private count = 0;
  /** Chunks not yet passed by a call, in order. */
  private chunks: AheadChunk[] = [];
  /** The highest foreseen number a call has matched (-1: none). */
  private last = -1;
  /** The next shard to block foreseen accounts. */
  private nextShard = 0;

  /**
   * `base`: records the shards held when foreseeing began (foreseen account n is their record base + n);
   * `shards`: those that block ahead, one after the other, and are told the accounts excluded.
   */
  constructor(
    readonly base: number,
    private readonly shards: readonly Shard[],
  ) {}

  /**
   * Numbers the next accounts (the shards hold them already, after every record before them) and
   * has the shards block them, in parts of at least AHEAD_MIN, one shard after the other.
   */
  blockAhead(ids: readonly string[]): void {
    const shards = this.shards;
    const first = this.add(ids);
    const bounds = sliceBounds(ids.length, Math.max(1, Math.min(shards.length, Math.floor(ids.length / AHEAD_MIN))));
    for (let i = 0; i + 1 < bounds.length; i++) {
      const from = first + bounds[i]!;
      const to = first + bounds[i + 1]!;
      const shard = shards[this.nextShard++ % shards.length]!;
      this.chunk(from, to, shard.blockHeld(this.base + from, this.base + to));
    }
  }

  private add(ids: readonly string[]): number {
    const first = this.count;
    for (const id of ids) {
      if (this.number.has(id)) throw new Error(`ParallelMatcher: account ${id} foreseen twice`);
      this.number.set(id, this.count++);
    }
    if (this.count > this.joinedAt.length) {
      const grown = new Int32Array(Math.max(this.count, this.joinedAt.length * 2)).fill(-1);
      grown.set(this.joinedAt);
      this.joinedAt = grown;
    }
    return first;
  }

  private chunk(start: number, end: number, slice: Promise<BlockedSlice>): void {
    // A failure is the call's to report; until a call awaits it, it must not count as unhandled.
    slice.catch(() => undefined);
    this.chunks.push({ start, end, slice, counted: false });
  }

  /** Foreseen account `id` joined the owner's baseline as its record `record`. */
  joined(id: string, record: number): void {
    const n = this.lastCall.get(id) ?? this.number.get(id);
    if (n === undefined) throw new Error(`ParallelMatcher: account ${id} joins the baseline but was not foreseen`);
    this.number.delete(id);
    this.joinedAt[n] = record;
  }

  /** The foreseen numbers of a call's accounts: each foreseen, in foreseen order, after every earlier call's. */
  private numbersOf(ids: readonly string[]): Int32Array {
    const numbers = new Int32Array(ids.length);
    let prev = this.last;
    const call = new Map<string, number>();
    ids.forEach((id, k) => {
      const n = this.number.get(id);
      if (n === undefined || n <= prev)
        throw new Error(`ParallelMatcher: account ${id} is matched without having been foreseen in this order`);
      numbers[k] = prev = n;
      call.set(id, n);
    });
    for (const id of ids) this.number.delete(id);
    this.excludeUnjoined();
    this.lastCall = call;
    if (ids.length > 0) this.last = prev;
    return numbers;
  }

  /**
   * The last call's accounts that did not join the baseline never will (joined() reads only the last
   * call's): the shards need not score pairs with them again.
   */
  private excludeUnjoined(): void {
    const never: number[] = [];
    for (const n of this.lastCall.values()) if (this.joinedAt[n]! < 0) never.push(this.base + n);
    if (never.length === 0) return;
    const records = Int32Array.from(never);
    for (const s of this.shards) s.exclude(records);
  }

  /** The chunks holding these numbers (increasing), awaited; every one ends before this resolves. */
  private async slicesFor(numbers: Int32Array): Promise<AheadChunk[]> {
    if (numbers.length === 0) return [];
    const lo = numbers[0]!;
    const hi = numbers[numbers.length - 1]!;
    const needed = this.chunks.filter((c) => c.end > lo && c.start <= hi);
    const waits = needed.map((c) => c.slice);
    await Promise.allSettled(waits);
    await Promise.all(waits);
    return needed;
  }

  /**
   * The slice of a call of these accounts in the owner's numbering: its baseline is records 0..B-1, its
   * accounts B..B+count-1. Chunks wholly before the call's last account are dropped afterwards.
   */
  async callSlice(ids: readonly string[], B: number, attributes: number): Promise<BlockedSlice> {
    const numbers = this.numbersOf(ids);
    const chunks = await this.slicesFor(numbers);
    const count = numbers.length;
    const status = new Uint8Array(count);
    const compared = new Int32Array(count);
    const generator = new Int16Array(count);
    const matchedStart = new Int32Array(count + 1);
    const candidates = new GrowingInt32();
    const scores = new GrowingFloat64();
    const fullScans = new GrowingInt32();
    const outcomes = new Float64Array(4);
    const position = new Map<number, number>();
    numbers.forEach((n, k) => position.set(n, k));
    let c = 0;
    /** Where the current chunk's full scans (pairs [account, attribute], by account) are read. */
    let f = 0;
    for (let k = 0; k < count; k++) {
      const n = numbers[k]!;
      while (chunks[c]!.end <= n) {
        c++;
        f = 0;
      }
      const chunk = chunks[c]!;
      const s = await chunk.slice;
      if (!chunk.counted) {
        chunk.counted = true;
        for (let o = 0; o < outcomes.length; o++) outcomes[o]! += s.outcomes[o]!;
      }
      const j = n - chunk.start;
      matchedStart[k] = candidates.length;
      status[k] = s.status[j]!;
      compared[k] = s.compared[j]!;
      generator[k] = s.generator[j]!;
      while (f < s.fullScans.length && s.fullScans[f]! < j) f += 2;
      for (; f < s.fullScans.length && s.fullScans[f] === j; f += 2) {
        fullScans.push(k);
        fullScans.push(s.fullScans[f + 1]!);
      }
      for (let m = s.matchedStart[j]!; m < s.matchedStart[j + 1]!; m++) {
        const record = this.renumber(s.candidates[m]!, position, k, B);
        if (record < 0) continue;
        candidates.push(record);
        scores.pushAll(s.scores.subarray(m * attributes, (m + 1) * attributes));
      }
    }
    matchedStart[count] = candidates.length;
    if (count > 0) this.chunks = this.chunks.filter((x) => x.end > numbers[count - 1]! + 1);
    return {
      from: 0,
      count,
      status,
      compared,
      generator,
      matchedStart,
      candidates: candidates.done(),
      scores: scores.done(),
      outcomes,
      fullScans: fullScans.done(),
    };
  }

  /** A shard's record number as the owner numbers it for the call's account k, or -1: not seen by it. */
  private renumber(record: number, position: Map<number, number>, k: number, B: number): number {
    if (record < this.base) return record;
    const n = record - this.base;
    const joined = this.joinedAt[n]!;
    if (joined >= 0) return joined;
    const p = position.get(n);
    return p !== undefined && p < k ? B + p : -1;
  }
}
