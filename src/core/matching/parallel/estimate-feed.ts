/**
 * A full probabilistic run's estimate, fed with its new accounts while its sources are still read.
 *
 * The estimate needs every new account before it can start its EM, but phase 1 does not: an account's
 * candidates are the baseline and the new accounts before it, blocked pair by pair (lossless indexes,
 * candidates in record order), so an account blocked as soon as it is appended gets the slice it would
 * get with every later account appended too. The one input of phase 1 that later records can change
 * is the probabilistic model's blocking attributes (value-stats.ts: the first 20,000 records held);
 * accounts are blocked only once that sample is complete (MatchEngine.blockingSettled), the others
 * when the last account has been added. So the estimate is bit for bit the one-call estimate's, while
 * phase 1 runs in the time the run waits for pages; after the last page only the estimate's phase 2
 * remains before the first batch.
 */
import type { BlockedSlice } from '../blocked-slice';
import { type EarlyLevels, joinLevels } from '../probabilistic/early-levels';
import type { MatchEngine } from '../matcher';
import type { Steps } from '../steps';
import type { MatchRecord, ParameterEstimate } from '../types';

export interface EstimateFeed {
  /** New accounts added so far. */
  readonly added: number;
  /** More new accounts, in the order they will be matched. */
  add(records: readonly MatchRecord[]): Promise<void>;
  /**
   * Estimates from the baseline and every account added (as `estimate()` with all of them would), then
   * drops them; undefined when nothing was estimated. Call it once, also when nothing was added: the
   * matcher takes other calls only after it.
   */
  finish(): Promise<ParameterEstimate | undefined>;
}

/** A feed that keeps the accounts and estimates over them in one call (a matcher whose estimate is not fed). */
export function collectingFeed(
  estimate: (records: readonly MatchRecord[]) => Promise<ParameterEstimate | undefined>,
): EstimateFeed {
  const records: MatchRecord[] = [];
  return {
    get added() {
      return records.length;
    },
    add: async (more) => {
      for (const r of more) records.push(r);
    },
    finish: () => (records.length === 0 ? Promise.resolve(undefined) : estimate(records)),
  };
}

export interface IncrementalEstimateDeps {
  /** The owner's engine, with the baseline loaded; nothing else appends to it until finish(). */
  engine: MatchEngine;
  /** Ends the call: the matcher takes other calls again. */
  release: () => void;
  /** One turn of the event loop (lock renewals, progress, I/O). */
  turn: () => Promise<void>;
  /** Runs phase 2's steps with turns between them. */
  stepped: <T>(steps: Steps<T>) => Promise<T>;
  /** Asked after each account blocked: true ends the slice, and a turn follows (loop-turns.ts, timeUp). */
  stopAfter: () => () => boolean;
  /** Accounts appended, and blocked (at most), between two turns. */
  appendChunk: number;
  blockChunk: number;
}

/** The in-thread feed: appends each account as it comes and blocks it once the blocking is settled. */
export class IncrementalEstimate implements EstimateFeed {
  /** The baseline's size, once the first accounts are appended (-1 before). */
  private B = -1;
  private count = 0;
  private blocked = 0;
  private slices: BlockedSlice[] = [];
  /** Each slice's pairs' levels, computed as it is blocked (early-levels.ts). */
  private levels: (EarlyLevels | undefined)[] = [];
  private finished = false;

  constructor(private readonly d: IncrementalEstimateDeps) {}

  get added(): number {
    return this.count;
  }

  async add(records: readonly MatchRecord[]): Promise<void> {
    if (this.finished) throw new Error('IncrementalEstimate: add after finish');
    const { engine, appendChunk, turn } = this.d;
    for (let a = 0; a < records.length; a += appendChunk) {
      const chunk = records.slice(a, a + appendChunk);
      // The first chunk starts the call (indexes built, the batch's values kept), as appendNew() does.
      if (this.B < 0) this.B = engine.appendNew(chunk);
      else engine.appendMoreNew(chunk);
      this.count += chunk.length;
      await turn();
    }
    if (engine.blockingSettled) await this.blockTo(this.count, true);
  }

  private async blockTo(to: number, ahead: boolean): Promise<void> {
    const { engine, blockChunk, stopAfter, turn, stepped } = this.d;
    // The first slice blocked ahead of the last page sets the roles its levels need (early-levels.ts).
    if (ahead && this.blocked === 0 && this.blocked < to) await stepped(engine.rolesAhead());
    while (this.blocked < to) {
      const end = Math.min(to, this.blocked + blockChunk);
      const slice = engine.blockSlice(this.B, this.blocked, end, stopAfter());
      this.slices.push(slice);
      this.levels.push(ahead ? engine.levelsAhead(this.B, slice) : undefined);
      this.blocked += slice.count;
      await turn();
    }
  }

  async finish(): Promise<ParameterEstimate | undefined> {
    if (this.finished) throw new Error('IncrementalEstimate: finish called twice');
    this.finished = true;
    const { engine, stepped } = this.d;
    try {
      if (this.count === 0) return undefined;
      // Blocked after the last page: their levels are the estimate's own work (no roles set ahead for them).
      await this.blockTo(this.count, false);
      const early = joinLevels(this.levels);
      this.levels = [];
      const { stats } = await stepped(engine.finishSlices(this.B, this.count, this.slices, 0, true, undefined, early));
      const parameters = engine.parameters();
      if (!parameters) return undefined;
      return { parameters, accounts: this.count, candidatePairs: stats.pairs.matched };
    } finally {
      if (this.B >= 0) engine.dropNew(this.B);
      this.slices = [];
      this.levels = [];
      this.d.release();
    }
  }
}
