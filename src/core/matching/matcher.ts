import type { BlockedSlice } from './blocked-slice';
import { EngineRecords, asArray } from './engine-records';
import { DEFAULT_PROBABILITY_THRESHOLD } from './matching-config';
import { candidatesObserver, recordMatchingStats } from './metrics';
import { ProbabilisticModel } from './probabilistic/model';
import { type BlockingMode, SliceBlocker } from './slice-blocking';
import { blockedAccounts, finishSlices } from './slice-finish';
import type { EarlyLevels } from './probabilistic/early-levels';
import { drain, type Steps } from './steps';
import type {
  MatchOptions,
  MatcherOptions,
  MatchRecord,
  MatchResult,
  MatchingSettings,
  ModelParameters,
  ParameterEstimate,
} from './types';

export interface Matcher {
  /**
   * Add records to the baseline (identities, or accounts created earlier in the run). May be
   * called any number of times, before and between match() calls: each record is prepared once
   * and appended to the candidate indexes, which are built only once (at the first match()).
   */
  addBaseline(records: Iterable<MatchRecord>): void;
  /**
   * Match new/changed accounts against the baseline and against each other. An account-account
   * pair is reported once: the later account (by position in newRecords) gets the earlier one as
   * candidate (candidateKind 'account'), so at most one of them becomes a new identity without review.
   * The new records are not kept: add the ones that become accounts with addBaseline(). The cost
   * is proportional to the new records and their candidates, not to the baseline.
   */
  match(newRecords: readonly MatchRecord[], opts?: MatchOptions): MatchResult;
  /** Probabilistic model: the parameters in use (given, or estimated by the first match()); rules: undefined. */
  parameters(): ModelParameters | undefined;
  /**
   * Probabilistic model without parameters yet: estimates them from the baseline plus these records,
   * blocked as match() would block them, and uses them from now on; matches nothing and keeps none of
   * the records (match them afterwards, in batches). Rules model, or parameters already in use:
   * undefined, nothing changes.
   */
  estimate(newRecords: readonly MatchRecord[]): ParameterEstimate | undefined;
  /** Probabilistic model: use these parameters from now on; MATCHING_INVALID when they do not fit. */
  useParameters(parameters: ModelParameters): void;
}

/**
 * The matcher: candidate indexes per attribute, exact scoring of the candidates only. Probabilistic
 * model: the same candidates (the blocking), each scored by its match probability.
 */
export function buildMatcher(settings: MatchingSettings, opts: MatcherOptions = {}): Matcher {
  return new EngineMatcher(settings, 'index', opts);
}

/** The oracle: scores every pair with the same rules. For tests, benchmarks and small inputs. */
export function buildExhaustiveMatcher(settings: MatchingSettings, opts: MatcherOptions = {}): Matcher {
  return new EngineMatcher(settings, 'exhaustive', opts);
}

/**
 * The matcher split in its two phases, for sharding (parallel/): a shard holds the same records and
 * runs blockSlice over its share of the new accounts; the owner runs finishSlices over all of them.
 * `blockOnly`: a shard's engine, without the probabilistic model's state (phase 2 never runs there).
 */
export interface MatchEngine extends Matcher {
  /** Appends this call's new records (indexes built first); returns B, the baseline size. Undo with dropNew(B). */
  appendNew(newRecords: Iterable<MatchRecord>): number;
  /** More of the same call's new records, after appendNew() (a call appended in chunks). */
  appendMoreNew(newRecords: readonly MatchRecord[]): void;
  dropNew(B: number): void;
  /** Phase 1 for the call's new accounts from..to-1, ending early when `stop` says so (SliceBlocker.blockSlice). */
  blockSlice(B: number, from: number, to: number, stop?: () => boolean): BlockedSlice;
  /**
   * Phase 1 for records from..to-1 already held, each against the records before it: the slice they
   * would get as a call's new records in that order, whatever records follow them (the rules model's
   * blocking is settled). A shard blocks a lean owner's foreseen accounts this way (foreseen-accounts.ts).
   */
  blockHeld(from: number, to: number): BlockedSlice;
  /** Records never a candidate from now on, in any slice (SliceBlocker.exclude). */
  exclude(records: Int32Array): void;
  /** Every candidate generator is lossless: a pair that passes the rules is a candidate, whatever else is held. */
  readonly blockingLossless: boolean;
  /**
   * Phase 2 in steps (steps.ts): drain() runs it in one go. `ids`: the ids of every record the slices
   * number (baseline, then the call's new ones) where this engine does not hold them all (an owner
   * that leaves phase 1 to shards keeps only ids; rules model only: its phase 2 reads nothing else).
   */
  finishSlices(
    B: number,
    count: number,
    slices: readonly BlockedSlice[],
    topK: number,
    estimateOnly?: boolean,
    ids?: readonly string[],
    early?: EarlyLevels,
  ): Steps<MatchResult>;
  /**
   * Probabilistic model without parameters: sets the roles the records held give (rules model: nothing),
   * so that levelsAhead() can compute a slice's levels before the estimate (early-levels.ts).
   */
  rolesAhead(): Steps<void>;
  /** The levels of a blocked slice's pairs with the roles set ahead; undefined without them. */
  levelsAhead(B: number, slice: BlockedSlice): EarlyLevels | undefined;
  /**
   * addBaseline() for records given as normalised value lists (values[i][r]: attribute i of record r),
   * as a shard receives them; block-only engines (no model state to feed).
   */
  addValues(ids: readonly string[], values: readonly (readonly (readonly string[])[])[], batch?: boolean): void;
  /** Records held: baseline plus appended new ones. */
  readonly size: number;
  /**
   * Whether records appended from now on leave phase 1's blocking attributes as they are (the rules
   * model; the probabilistic model once its value statistics are complete): a slice blocked now is
   * then the slice blocked after more records are appended.
   */
  readonly blockingSettled: boolean;
}

export function buildMatchEngine(
  settings: MatchingSettings,
  opts: MatcherOptions = {},
  blockOnly = false,
): MatchEngine {
  return new EngineMatcher(settings, 'index', opts, blockOnly);
}

/**
 * The two phases over one record store: value preparation and the records (engine-records.ts), phase 1
 * (slice-blocking.ts), phase 2 (slice-finish.ts); the probabilistic model's parameters are its own
 * (probabilistic/model.ts). This class sequences them per call.
 */
class EngineMatcher implements MatchEngine {
  private readonly records: EngineRecords;
  private readonly blocker: SliceBlocker;
  private readonly observers = new Map<string, (k: number) => void>();
  private readonly observeCandidates: ((label: string, k: number) => void) | undefined;

  constructor(
    private readonly settings: MatchingSettings,
    mode: BlockingMode,
    opts: MatcherOptions,
    blockOnly = false,
  ) {
    this.observeCandidates = opts.observeCandidates;
    const threshold = settings.probabilityThreshold ?? DEFAULT_PROBABILITY_THRESHOLD;
    this.records = new EngineRecords(
      settings.attributes,
      settings.model === 'probabilistic' && !blockOnly
        ? (runtimes) => new ProbabilisticModel(runtimes, threshold, opts.parameters)
        : undefined,
      settings.model === 'probabilistic',
    );
    this.blocker = new SliceBlocker(settings, this.records.runtimes, this.records.recordIds, mode, this.records.stats);
  }

  private get model(): ProbabilisticModel | undefined {
    return this.records.model;
  }

  addBaseline(records: Iterable<MatchRecord>): void {
    this.records.append(asArray(records));
  }

  get size(): number {
    return this.records.size;
  }

  get blockingSettled(): boolean {
    return this.records.stats?.complete ?? true;
  }

  appendNew(newRecords: Iterable<MatchRecord>): number {
    const B = this.records.size;
    this.buildIndexes();
    this.records.append(asArray(newRecords), true);
    return B;
  }

  appendMoreNew(newRecords: readonly MatchRecord[]): void {
    this.records.append(newRecords, true, false);
  }

  addValues(ids: readonly string[], values: readonly (readonly (readonly string[])[])[], batch = false): void {
    this.records.appendValues(ids, values, batch);
  }

  dropNew(B: number): void {
    this.records.truncate(B);
  }

  private observe(label: string, k: number): void {
    if (this.observeCandidates) return this.observeCandidates(label, k);
    let o = this.observers.get(label);
    if (!o) this.observers.set(label, (o = candidatesObserver(label)));
    o(k);
  }

  parameters(): ModelParameters | undefined {
    return this.model?.parameters();
  }

  useParameters(parameters: ModelParameters): void {
    this.model?.use(parameters);
  }

  estimate(newRecords: readonly MatchRecord[]): ParameterEstimate | undefined {
    const model = this.model;
    if (!model || model.parameters()) return undefined;
    this.buildIndexes();
    const B = this.records.size;
    this.records.append(newRecords);
    try {
      const { stats } = this.matchAppended(B, newRecords.length, 0, true);
      const parameters = model.parameters();
      if (!parameters) return undefined;
      return { parameters, accounts: newRecords.length, candidatePairs: stats.pairs.matched };
    } finally {
      this.records.truncate(B);
    }
  }

  private buildIndexes(): void {
    this.blocker.buildIndexes();
    this.records.combined = this.blocker.combined;
  }

  match(newRecords: readonly MatchRecord[], opts: MatchOptions = {}): MatchResult {
    const t0 = performance.now();
    const B = this.records.size;
    this.buildIndexes();
    // The new records are appended (and indexed) for this call only: each is probed with
    // limit = its own position, so it sees the baseline and the new records before it.
    this.records.append(newRecords, true);
    try {
      const t1 = performance.now();
      const result = this.matchAppended(B, newRecords.length, opts.topK ?? this.settings.reviewTopK);
      result.stats.buildMs = t1 - t0;
      result.stats.matchMs = performance.now() - t1;
      recordMatchingStats(result.stats);
      return result;
    } finally {
      this.records.truncate(B);
    }
  }

  /** estimateOnly: block and estimate the model's parameters (stats.pairs.matched = blocked pairs), no scoring. */
  private matchAppended(B: number, count: number, topK: number, estimateOnly = false): MatchResult {
    return drain(this.finishSlices(B, count, [this.blockSlice(B, 0, count)], topK, estimateOnly));
  }

  blockSlice(B: number, from: number, to: number, stop?: () => boolean): BlockedSlice {
    return this.blocker.blockSlice(B, from, to, stop);
  }

  blockHeld(from: number, to: number): BlockedSlice {
    if (from < 0 || from > to || to > this.records.size)
      throw new Error(`blockHeld: records ${from}..${to - 1} of ${this.records.size} held`);
    this.buildIndexes();
    return this.blocker.blockSlice(from, 0, to - from);
  }

  exclude(records: Int32Array): void {
    this.blocker.exclude(records);
  }

  get blockingLossless(): boolean {
    this.buildIndexes();
    return this.blocker.lossless;
  }

  finishSlices(
    B: number,
    count: number,
    slices: readonly BlockedSlice[],
    topK: number,
    estimateOnly = false,
    ids: readonly string[] = this.records.ids,
    early?: EarlyLevels,
  ): Steps<MatchResult> {
    if (ids !== this.records.ids && this.model)
      throw new Error('finishSlices: the probabilistic model needs its records');
    // The combined generator's label names its two attributes; an owner that never blocked has not built it yet.
    this.buildIndexes();
    const context = {
      rules: this.settings.attributes,
      ids,
      combined: this.blocker.combined,
      model: this.model,
      observe: (label: string, k: number) => this.observe(label, k),
    };
    return finishSlices(context, B, count, slices, topK, estimateOnly, early);
  }

  *rolesAhead(): Steps<void> {
    if (this.model) yield* this.model.rolesAhead(this.records.size);
  }

  levelsAhead(B: number, slice: BlockedSlice): EarlyLevels | undefined {
    return this.model?.levelsAhead(blockedAccounts(slice, B, this.settings.attributes.length));
  }
}
