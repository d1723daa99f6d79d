import { type AttributeRuntime, prepareAttribute } from './attribute-runtime';
import {
  ACCOUNT_COMPARED,
  ACCOUNT_MISSING_ALL,
  ACCOUNT_MISSING_MANDATORY,
  ACCOUNT_WITHOUT_VALUES,
  type BlockedSlice,
  GENERATOR_COMBINED,
  GENERATOR_EXHAUSTIVE,
  GENERATOR_UNION,
  GrowingFloat64,
  GrowingInt32,
} from './blocked-slice';
import { DEFAULT_PROBABILITY_THRESHOLD } from './matching-config';
import { CandidateCollector, type CandidateIndex } from './indexes/candidate-collector';
import { CombinedIndex } from './indexes/combined-index';
import { KeyIndex } from './indexes/key-index';
import { NameIndex } from './indexes/name-index';
import { candidatesObserver, recordMatchingStats } from './metrics';
import { attributeKind } from './probabilistic/comparators';
import { type BlockedAccount, DEFERRED_SCORE, ProbabilisticModel } from './probabilistic/model';
import {
  type Algorithm,
  type AttributeMatchRule,
  CANDIDATE_BUCKETS,
  type MatchOptions,
  type MatcherOptions,
  type MatchRecord,
  type MatchResult,
  type MatchStats,
  type MatchingSettings,
  type ModelParameters,
  type PairOutcome,
  type ParameterEstimate,
  type PotentialDuplicate,
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

type Mode = 'index' | 'exhaustive';

/** Order of BlockedSlice.outcomes. */
const OUTCOMES: readonly PairOutcome[] = ['matched', 'below_threshold', 'mandatory_failed', 'value_missing'];

/** Cheapest single index's estimate above which the combined index is considered. */
const COMBINED_FROM = 24;

/** Relative cost of scoring one pair, to test cheap mandatory attributes first. */
const SCORE_COST: Record<Algorithm, number> = {
  exact: 0,
  'double-metaphone': 1,
  levenshtein: 2,
  dice: 3,
  'jaro-winkler': 4,
  'name-matcher': 5,
};

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
  dropNew(B: number): void;
  blockSlice(B: number, from: number, to: number): BlockedSlice;
  finishSlices(
    B: number,
    count: number,
    slices: readonly BlockedSlice[],
    topK: number,
    estimateOnly?: boolean,
  ): MatchResult;
  /**
   * addBaseline() for records given as normalised value lists (values[i][r]: attribute i of record r),
   * as a shard receives them; block-only engines (no model state to feed).
   */
  addValues(ids: readonly string[], values: readonly (readonly (readonly string[])[])[], batch?: boolean): void;
  /** Records held: baseline plus appended new ones. */
  readonly size: number;
}

export function buildMatchEngine(
  settings: MatchingSettings,
  opts: MatcherOptions = {},
  blockOnly = false,
): MatchEngine {
  return new EngineMatcher(settings, 'index', opts, blockOnly);
}

const asArray = (records: Iterable<MatchRecord>): readonly MatchRecord[] =>
  Array.isArray(records) ? (records as readonly MatchRecord[]) : [...records];

function emptyStats(): MatchStats {
  return {
    accounts: 0,
    baseline: 0,
    pairsCompared: 0,
    pairs: { matched: 0, below_threshold: 0, mandatory_failed: 0, value_missing: 0 },
    accountsWithDuplicates: 0,
    truncated: 0,
    accountsMissingMandatory: 0,
    accountsWithoutValues: 0,
    candidatesHistogram: CANDIDATE_BUCKETS.map(() => 0),
    candidatesMean: 0,
    candidatesMax: 0,
    fullScans: {},
    generatorUse: {},
    buildMs: 0,
    matchMs: 0,
  };
}

function bucketOf(n: number): number {
  let i = 0;
  while (n > CANDIDATE_BUCKETS[i]!) i++;
  return i;
}

/** Ranking: probability (probabilistic) or overall score desc, identities before accounts, then candidate id. */
function compareDuplicates(a: PotentialDuplicate, b: PotentialDuplicate): number {
  const pa = a.probability ?? -1;
  const pb = b.probability ?? -1;
  if (pa !== pb) return pb - pa;
  if (a.score !== b.score) return b.score - a.score;
  if (a.candidateKind !== b.candidateKind) return a.candidateKind === 'identity' ? -1 : 1;
  return a.candidateId < b.candidateId ? -1 : a.candidateId > b.candidateId ? 1 : 0;
}

class EngineMatcher implements MatchEngine {
  /** Record ids, baseline first; the per-attribute values live in the runtimes (no record objects kept). */
  private readonly ids: string[] = [];
  private readonly rules: readonly AttributeMatchRule[];
  private readonly runtimes: AttributeRuntime[];
  /** Mandatory attributes are evaluated first, cheapest algorithm first: a failure ends the pair. */
  private readonly order: number[];
  private readonly mandatory: number[];
  /** Candidate generators: the mandatory attributes (one suffices per account), else all (union). */
  private readonly generatorIdx: number[];
  /** Attributes whose threshold makes a pair a candidate (all but surnames under a name, probabilistic). */
  private readonly blocks: boolean[];
  private indexes: Map<number, CandidateIndex> | undefined;
  /** A mandatory lossless key attribute and a mandatory name attribute: their (key, token) index. */
  private combined: { index: CombinedIndex; keyAttr: number; nameAttr: number } | undefined;
  private readonly collector = new CandidateCollector(0);
  private readonly scores: Float64Array;
  private readonly observers = new Map<string, (k: number) => void>();
  /** Probabilistic model only: levels, parameters and probabilities over the same records. */
  private readonly model: ProbabilisticModel | undefined;

  constructor(
    private readonly settings: MatchingSettings,
    private readonly mode: Mode,
    opts: MatcherOptions,
    blockOnly = false,
  ) {
    const rules = settings.attributes;
    this.rules = rules;
    this.runtimes = rules.map((rule) => prepareAttribute(rule));
    const cost = (i: number): number => (rules[i]!.mandatory ? SCORE_COST[rules[i]!.algorithm] : 0);
    this.order = rules
      .map((_, i) => i)
      .sort((a, b) => Number(rules[b]!.mandatory) - Number(rules[a]!.mandatory) || cost(a) - cost(b) || a - b);
    this.mandatory = this.order.filter((i) => rules[i]!.mandatory);
    this.blocks = rules.map((_, i) => settings.model !== 'probabilistic' || !surnameUnderName(rules, i));
    const blocking = this.order.filter((i) => this.blocks[i]);
    this.generatorIdx = mode === 'index' ? (this.mandatory.length > 0 ? this.mandatory : blocking) : [];
    this.scores = new Float64Array(rules.length);
    if (settings.model === 'probabilistic' && !blockOnly) {
      this.model = new ProbabilisticModel(
        this.runtimes,
        settings.probabilityThreshold ?? DEFAULT_PROBABILITY_THRESHOLD,
        opts.parameters,
      );
    }
  }

  addBaseline(records: Iterable<MatchRecord>): void {
    this.append(asArray(records));
  }

  /** `batch`: a call's new records (see AttributeRuntime.append). */
  private append(records: readonly MatchRecord[], batch = false): void {
    for (const r of records) this.ids.push(r.id);
    for (const rt of this.runtimes) rt.append(records, batch);
    this.combined?.index.append(this.ids.length);
    this.model?.append(records);
  }

  get size(): number {
    return this.ids.length;
  }

  appendNew(newRecords: Iterable<MatchRecord>): number {
    const B = this.ids.length;
    this.buildIndexes();
    this.append(asArray(newRecords), true);
    return B;
  }

  addValues(ids: readonly string[], values: readonly (readonly (readonly string[])[])[], batch = false): void {
    if (this.model) throw new Error('addValues: only a block-only engine takes prepared values');
    for (const id of ids) this.ids.push(id);
    this.runtimes.forEach((rt, i) => rt.appendValues(values[i]!, batch));
    this.combined?.index.append(this.ids.length);
  }

  dropNew(B: number): void {
    this.truncate(B);
  }

  private truncate(n: number): void {
    this.combined?.index.truncate(n);
    for (const rt of this.runtimes) rt.truncate(n);
    this.model?.truncate(n);
    this.ids.length = n;
  }

  private observe(label: string, k: number): void {
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
    if (!this.model || this.model.parameters()) return undefined;
    this.buildIndexes();
    const B = this.ids.length;
    this.append(newRecords);
    try {
      const { stats } = this.matchAppended(B, newRecords.length, 0, true);
      const parameters = this.model.parameters();
      if (!parameters) return undefined;
      return { parameters, accounts: newRecords.length, candidatePairs: stats.pairs.matched };
    } finally {
      this.truncate(B);
    }
  }

  private buildIndexes(): void {
    if (this.indexes) return;
    // Built once, over the baseline so far; every later record is appended to them.
    this.indexes = new Map();
    for (const i of this.generatorIdx) this.indexes.set(i, this.runtimes[i]!.index());
    const mandatoryIndex = (is: (x: CandidateIndex) => boolean): number =>
      this.mandatory.find((i) => is(this.indexes!.get(i)!)) ?? -1;
    const keyAttr = mandatoryIndex((x) => x instanceof KeyIndex && x.lossless);
    const nameAttr = mandatoryIndex((x) => x instanceof NameIndex);
    if (this.mode === 'index' && keyAttr >= 0 && nameAttr >= 0) {
      const keys = this.indexes.get(keyAttr) as KeyIndex<unknown>;
      const names = this.indexes.get(nameAttr) as NameIndex;
      this.combined = { index: new CombinedIndex(keys, names), keyAttr, nameAttr };
    }
  }

  match(newRecords: readonly MatchRecord[], opts: MatchOptions = {}): MatchResult {
    const t0 = performance.now();
    const B = this.ids.length;
    this.buildIndexes();
    // The new records are appended (and indexed) for this call only: each is probed with
    // limit = its own position, so it sees the baseline and the new records before it.
    this.append(newRecords, true);
    try {
      const t1 = performance.now();
      const result = this.matchAppended(B, newRecords.length, opts.topK ?? this.settings.reviewTopK);
      result.stats.buildMs = t1 - t0;
      result.stats.matchMs = performance.now() - t1;
      recordMatchingStats(result.stats);
      return result;
    } finally {
      this.truncate(B);
    }
  }

  /** estimateOnly: block and estimate the model's parameters (stats.pairs.matched = blocked pairs), no scoring. */
  private matchAppended(B: number, count: number, topK: number, estimateOnly = false): MatchResult {
    return this.finishSlices(B, count, [this.blockSlice(B, 0, count)], topK, estimateOnly);
  }

  /**
   * Phase 1 for the new accounts at positions from..to-1 of the appended new records (record numbers
   * B+from..B+to-1): candidates from the indexes, each evaluated. Each account sees the baseline and the
   * new records before it, so the slice depends only on the records, not on other slices.
   */
  blockSlice(B: number, from: number, to: number): BlockedSlice {
    const { runtimes, order, mandatory, generatorIdx, ids, scores } = this;
    const indexes = this.indexes!;
    const count = to - from;
    const status = new Uint8Array(count);
    const comparedOf = new Int32Array(count);
    const generator = new Int16Array(count);
    const matchedStart = new Int32Array(count + 1);
    const candidates = new GrowingInt32();
    const matchedScores = new GrowingFloat64();
    const fullScans = new GrowingInt32();
    const outcomes = new Float64Array(OUTCOMES.length);
    const collector = this.collector;
    collector.ensure(this.ids.length);
    for (let k = 0; k < count; k++) {
      matchedStart[k] = candidates.length;
      const g = B + from + k;
      const accountId = ids[g]!;
      if (mandatory.some((i) => !runtimes[i]!.hasValue(g))) {
        status[k] = runtimes.some((rt) => rt.hasValue(g)) ? ACCOUNT_MISSING_MANDATORY : ACCOUNT_MISSING_ALL;
        continue;
      }
      if (!runtimes.some((rt) => rt.hasValue(g))) {
        status[k] = ACCOUNT_WITHOUT_VALUES;
        continue;
      }

      collector.begin();
      if (this.mode === 'exhaustive') {
        for (let c = 0; c < g; c++) collector.add(c);
        generator[k] = GENERATOR_EXHAUSTIVE;
      } else {
        const chosen = this.chooseGenerators(g, generatorIdx, mandatory.length > 0, indexes, runtimes);
        if (chosen[0] === GENERATOR_COMBINED) {
          this.combined!.index.probe(g, g, collector);
        } else {
          for (const i of chosen) {
            const info = indexes.get(i)!.probe(g, g, collector);
            if (info.fullScan) {
              fullScans.push(k);
              fullScans.push(i);
            }
          }
        }
        if (mandatory.length > 0) this.refine(g, chosen[0]!, mandatory, indexes, collector);
        generator[k] = chosen.length === 1 ? chosen[0]! : GENERATOR_UNION;
      }

      let compared = 0;
      for (let j = 0; j < collector.size; j++) {
        const c = collector.list[j]!;
        if (ids[c] === accountId) continue;
        compared++;
        const outcome = this.evaluate(g, c, runtimes, order, scores);
        outcomes[OUTCOMES.indexOf(outcome)]!++;
        if (outcome !== 'matched') continue;
        candidates.push(c);
        matchedScores.pushAll(scores);
      }
      comparedOf[k] = compared;
    }
    matchedStart[count] = candidates.length;
    return {
      from,
      count,
      status,
      compared: comparedOf,
      generator,
      matchedStart,
      candidates: candidates.done(),
      scores: matchedScores.done(),
      outcomes,
      fullScans: fullScans.done(),
    };
  }

  /**
   * Phase 2: the blocked slices (in order, covering the count new accounts) become the result: the
   * rules' score aggregation, or the probabilistic model's probabilities (its term frequencies live
   * here, in the owner of the records), then ranking, topK and the stats.
   */
  finishSlices(
    B: number,
    count: number,
    slices: readonly BlockedSlice[],
    topK: number,
    estimateOnly = false,
  ): MatchResult {
    const { rules, ids } = this;
    const A = rules.length;
    const n = B + count;
    const stats = emptyStats();
    stats.accounts = count;
    stats.baseline = B;
    const duplicates = new Map<string, PotentialDuplicate[]>();
    const blocked: BlockedAccount[] = [];
    let candidatesTotal = 0;
    const finish = (accountId: string, found: PotentialDuplicate[]): void => {
      found.sort(compareDuplicates);
      if (found.length > topK) {
        stats.truncated += found.length - topK;
        found.length = topK;
      }
      duplicates.set(accountId, found);
      stats.accountsWithDuplicates++;
    };

    let next = 0;
    for (const slice of slices) {
      if (slice.from !== next) throw new Error(`blocked slices out of order: ${slice.from} after ${next}`);
      next += slice.count;
      OUTCOMES.forEach((o, i) => (stats.pairs[o] += slice.outcomes[i]!));
      for (let f = 0; f < slice.fullScans.length; f += 2) {
        const alg: Algorithm = rules[slice.fullScans[f + 1]!]!.algorithm;
        stats.fullScans[alg] = (stats.fullScans[alg] ?? 0) + 1;
      }
      for (let k = 0; k < slice.count; k++) {
        const st = slice.status[k]!;
        if (st !== ACCOUNT_COMPARED) {
          if (st !== ACCOUNT_WITHOUT_VALUES) stats.accountsMissingMandatory++;
          if (st !== ACCOUNT_MISSING_MANDATORY) stats.accountsWithoutValues++;
          stats.candidatesHistogram[0]!++;
          continue;
        }
        const g = B + slice.from + k;
        const accountId = ids[g]!;
        const gen = slice.generator[k]!;
        let label = 'exhaustive';
        if (gen !== GENERATOR_EXHAUSTIVE) {
          const { keyAttr, nameAttr } = this.combined ?? { keyAttr: 0, nameAttr: 0 };
          label = gen === GENERATOR_UNION ? 'union' : gen === GENERATOR_COMBINED ? 'combined' : rules[gen]!.algorithm;
          const name =
            gen === GENERATOR_UNION
              ? 'union'
              : gen === GENERATOR_COMBINED
                ? `${rules[keyAttr]!.attribute}+${rules[nameAttr]!.attribute}`
                : rules[gen]!.attribute;
          stats.generatorUse[name] = (stats.generatorUse[name] ?? 0) + 1;
        }
        const compared = slice.compared[k]!;
        const lo = slice.matchedStart[k]!;
        const hi = slice.matchedStart[k + 1]!;
        if (lo < hi && this.model) {
          // Views, not copies: millions of blocked pairs at 100k accounts.
          const scores = slice.scores.subarray(lo * A, hi * A);
          blocked.push({ g, candidates: slice.candidates.subarray(lo, hi), scores });
        } else if (lo < hi) {
          const found: PotentialDuplicate[] = [];
          for (let j = lo; j < hi; j++) {
            const c = slice.candidates[j]!;
            const perAttr: Record<string, number> = {};
            let sum = 0;
            let cnt = 0;
            for (let i = 0; i < A; i++) {
              const s = slice.scores[j * A + i]!;
              if (s < 0) continue;
              perAttr[rules[i]!.attribute] = s;
              sum += s;
              cnt++;
            }
            found.push({
              accountId,
              candidateId: ids[c]!,
              candidateKind: c < B ? 'identity' : 'account',
              score: Math.round((sum / cnt) * 10) / 10,
              scores: perAttr,
            });
          }
          finish(accountId, found);
        }
        stats.pairsCompared += compared;
        candidatesTotal += compared;
        if (compared > stats.candidatesMax) stats.candidatesMax = compared;
        stats.candidatesHistogram[bucketOf(compared)]!++;
        this.observe(label, compared);
      }
    }
    if (next !== count) throw new Error(`blocked slices cover ${next} of ${count} new accounts`);
    if (this.model && estimateOnly) {
      this.model.prime(n, blocked, count);
    } else if (this.model) {
      const scored = this.model.score(n, blocked, count, ids, B);
      stats.pairs.matched -= scored.below;
      stats.pairs.below_threshold += scored.below;
      for (const [accountId, found] of scored.duplicates) finish(accountId, found);
    }
    stats.candidatesMean = count > 0 ? candidatesTotal / count : 0;
    return { duplicates, stats };
  }

  /**
   * With mandatory attributes every match passes each of them, so the cheapest lossless mandatory
   * index suffices (a lossy one only when no lossless one exists). Without, a match passes at least
   * one attribute: union over the attributes the account has a value for.
   */
  private chooseGenerators(
    g: number,
    generatorIdx: number[],
    hasMandatory: boolean,
    indexes: Map<number, CandidateIndex>,
    runtimes: AttributeRuntime[],
  ): number[] {
    if (!hasMandatory) return generatorIdx.filter((i) => runtimes[i]!.hasValue(g));
    let best = -1;
    let bestCost = Number.POSITIVE_INFINITY;
    let bestLossless = false;
    for (const i of generatorIdx) {
      const index = indexes.get(i)!;
      const cost = index.estimate(g);
      if ((index.lossless && !bestLossless) || (index.lossless === bestLossless && cost < bestCost)) {
        best = i;
        bestCost = cost;
        bestLossless = index.lossless;
      }
    }
    // Both of its attributes are mandatory and lossless, so it competes with the lossless indexes;
    // its estimate looks up a posting per neighbour token, more than a short bucket costs to walk.
    if (this.combined && bestCost > COMBINED_FROM && this.combined.index.estimate(g) < bestCost)
      return [GENERATOR_COMBINED];
    return [best];
  }

  /**
   * A match passes every mandatory attribute, so the chosen index's candidates are intersected
   * with every lossless mandatory index's exact bound (a membership test per candidate, not a walk
   * of their postings): a common surname's bucket shrinks to the records whose name can also pass.
   * The chosen index is refined too when its probe is a looser bound than its refine (the name
   * index's count filter takes the fewest tokens any partner size needs; refine the partner's own):
   * the candidates are then the same whichever index generated them, so the counts in the stats do
   * not depend on the per-account choice (which follows caches that differ between threads). A key
   * index that generated (alone or in the combined index) needs no refine: its candidates share a key.
   */
  private refine(
    g: number,
    chosen: number,
    mandatory: number[],
    indexes: Map<number, CandidateIndex>,
    collector: CandidateCollector,
  ): void {
    const keyDone = chosen === GENERATOR_COMBINED ? this.combined!.keyAttr : chosen;
    for (const i of mandatory) {
      if (collector.size === 0) return;
      const index = indexes.get(i)!;
      if (i === keyDone && index instanceof KeyIndex) continue;
      if (index.lossless && index.refine) index.refine(g, collector);
    }
  }

  private evaluate(
    a: number,
    b: number,
    runtimes: AttributeRuntime[],
    order: number[],
    scores: Float64Array,
  ): PairOutcome {
    scores.fill(-1);
    let anyCompared = false;
    let anyPass = false;
    for (const i of order) {
      const rt = runtimes[i]!;
      if (!this.blocks[i] && !rt.rule.mandatory) {
        // Probabilistic surname under a name: it cannot make the pair a candidate, and its level
        // mostly needs no score (equal surnames); the model scores it when the level needs it.
        if (rt.hasValue(a) && rt.hasValue(b)) {
          scores[i] = DEFERRED_SCORE;
          anyCompared = true;
        }
        continue;
      }
      const s = rt.score(a, b);
      scores[i] = s;
      if (s < 0) {
        if (rt.rule.mandatory) return 'value_missing';
        continue;
      }
      anyCompared = true;
      if (s >= rt.rule.threshold && this.blocks[i]) anyPass = true;
      else if (rt.rule.mandatory) return 'mandatory_failed';
    }
    if (!anyCompared) return 'value_missing';
    return anyPass ? 'matched' : 'below_threshold';
  }
}

/**
 * Probabilistic model: a surname next to a name attribute does not make candidates on its own. The
 * name already blocks on it, and a common surname alone (Smith) would bring thousands of pairs
 * that only the weights would then turn down.
 */
function surnameUnderName(rules: readonly AttributeMatchRule[], i: number): boolean {
  return attributeKind(rules[i]!) === 'surname' && rules.some((r) => attributeKind(r) === 'name');
}
