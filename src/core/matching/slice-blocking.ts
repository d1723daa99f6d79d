/**
 * Phase 1 of matching ("block"): the candidate indexes per generating attribute and, for a slice of the
 * new accounts, each account's candidates evaluated against the rules (thresholds, mandatory attributes).
 * It reads only the records' prepared values, so any thread or shard holding the same records computes
 * the same slice (blocked-slice.ts); phase 2 (slice-finish.ts) merges the slices in order.
 */
import type { AttributeRuntime } from './attribute-runtime';
import {
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
import { CandidateCollector, type CandidateIndex } from './indexes/candidate-collector';
import { CombinedIndex } from './indexes/combined-index';
import { KeyIndex } from './indexes/key-index';
import { NameIndex } from './indexes/name-index';
import { attributeKind } from './probabilistic/comparators';
import { DEFERRED_SCORE } from './probabilistic/model';
import type { RecordIds } from './record-ids';
import type { Algorithm, AttributeMatchRule, MatchingSettings, PairOutcome } from './types';
import { CHANCE_WEAK, type ValueStats, fuzzyPass } from './value-stats';

export type BlockingMode = 'index' | 'exhaustive';

/** Order of BlockedSlice.outcomes. */
export const OUTCOMES: readonly PairOutcome[] = ['matched', 'below_threshold', 'mandatory_failed', 'value_missing'];

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

/** The combined (key, name token) index and the two mandatory attributes it stands for. */
export interface CombinedGenerator {
  index: CombinedIndex;
  keyAttr: number;
  nameAttr: number;
}

export class SliceBlocker {
  /** Mandatory attributes are evaluated first, cheapest algorithm first: a failure ends the pair. */
  private readonly order: number[];
  private readonly mandatory: number[];
  /** Candidate generators: the mandatory attributes (one suffices per account), else all (union). */
  private readonly generatorIdx: number[];
  /**
   * Attributes whose threshold makes a pair a candidate (all but surnames under a name, probabilistic).
   * Probabilistic model: also not the weak ones of this call's records (see weakAttributes).
   */
  private blocks: boolean[];
  private readonly configuredBlocks: boolean[];
  private indexes: Map<number, CandidateIndex> | undefined;
  /** A mandatory lossless key attribute and a mandatory name attribute: their (key, token) index. */
  combined: CombinedGenerator | undefined;
  private readonly collector = new CandidateCollector(0);
  private readonly scores: Float64Array;
  /** 1: the record is never a candidate again (exclude()); absent until the first exclusion. */
  private never: Uint8Array | undefined;

  constructor(
    settings: MatchingSettings,
    private readonly runtimes: readonly AttributeRuntime[],
    private readonly ids: RecordIds,
    private readonly mode: BlockingMode,
    private readonly stats?: ValueStats,
  ) {
    const rules = settings.attributes;
    const cost = (i: number): number => (rules[i]!.mandatory ? SCORE_COST[rules[i]!.algorithm] : 0);
    this.order = rules
      .map((_, i) => i)
      .sort((a, b) => Number(rules[b]!.mandatory) - Number(rules[a]!.mandatory) || cost(a) - cost(b) || a - b);
    this.mandatory = this.order.filter((i) => rules[i]!.mandatory);
    this.blocks = rules.map((_, i) => settings.model !== 'probabilistic' || !surnameUnderName(rules, i));
    this.configuredBlocks = this.blocks;
    const blocking = this.order.filter((i) => this.blocks[i]);
    this.generatorIdx = mode === 'index' ? (this.mandatory.length > 0 ? this.mandatory : blocking) : [];
    this.scores = new Float64Array(rules.length);
  }

  /** Builds the indexes once, over the baseline so far; every later record is appended to them. */
  buildIndexes(): void {
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

  /**
   * These records are never a candidate from now on: a lean owner's shard told which accounts held
   * ahead will never join the run's baseline (sent to review), so pairs with them are not scored.
   * Sound only where no call may see them again; the owner's filter would drop them anyway.
   */
  exclude(records: Int32Array): void {
    let top = -1;
    for (const r of records) top = Math.max(top, r);
    if (top >= (this.never?.length ?? 0)) {
      const grown = new Uint8Array(Math.max(top + 1, 2 * (this.never?.length ?? 0), 1024));
      if (this.never) grown.set(this.never);
      this.never = grown;
    }
    for (const r of records) this.never![r] = 1;
  }

  /** Every generator is lossless (the exhaustive mode compares every pair); after buildIndexes(). */
  get lossless(): boolean {
    return this.mode === 'exhaustive' || this.generatorIdx.every((i) => this.indexes!.get(i)!.lossless);
  }

  /**
   * Phase 1 for the new accounts at positions from..to-1 of the appended new records (record numbers
   * B+from..B+to-1): candidates from the indexes, each evaluated. Each account sees the baseline and the
   * new records before it, so the slice depends only on the records, not on other slices. `stop`, asked
   * after each account: true ends the slice there (at least one account); its count says where the
   * next slice starts.
   */
  blockSlice(B: number, from: number, to: number, stop?: () => boolean): BlockedSlice {
    const { runtimes, order, mandatory, generatorIdx, scores } = this;
    const ids = this.ids.list;
    const idHashes = this.ids.hashes;
    const indexes = this.indexes!;
    let count = to - from;
    const status = new Uint8Array(count);
    const comparedOf = new Int32Array(count);
    const generator = new Int16Array(count);
    const matchedStart = new Int32Array(count + 1);
    const candidates = new GrowingInt32();
    const matchedScores = new GrowingFloat64();
    const fullScans = new GrowingInt32();
    const outcomes = new Float64Array(OUTCOMES.length);
    const collector = this.collector;
    const never = this.never;
    collector.ensure(this.ids.length);
    this.blocks = blockingAttributes(this.configuredBlocks, this.stats, this.runtimes);
    for (let k = 0; k < count; k++) {
      if (k > 0 && stop?.() === true) {
        count = k;
        break;
      }
      matchedStart[k] = candidates.length;
      const g = B + from + k;
      const accountId = ids[g]!;
      const accountHash = idHashes[g]!;
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
        // Record order, whichever index generated them: the generator a thread or a child job picks
        // follows its own caches, and phase 2 sums over an account's candidates in this order, so an
        // order of its own gave a probability a last-bit different from the one-thread run's.
        collector.list.subarray(0, collector.size).sort();
      }

      let compared = 0;
      for (let j = 0; j < collector.size; j++) {
        const c = collector.list[j]!;
        if (idHashes[c] === accountHash && ids[c] === accountId) continue; // its own id (RecordIds: hash first)
        if (never !== undefined && never[c] === 1) continue;
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
    const cut = count < to - from;
    return {
      from,
      count,
      status: cut ? status.slice(0, count) : status,
      compared: cut ? comparedOf.slice(0, count) : comparedOf,
      generator: cut ? generator.slice(0, count) : generator,
      matchedStart: cut ? matchedStart.slice(0, count + 1) : matchedStart,
      candidates: candidates.done(),
      scores: matchedScores.done(),
      outcomes,
      fullScans: fullScans.done(),
    };
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
    runtimes: readonly AttributeRuntime[],
  ): number[] {
    if (!hasMandatory) return generatorIdx.filter((i) => this.blocks[i] && runtimes[i]!.hasValue(g));
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
    runtimes: readonly AttributeRuntime[],
    order: number[],
    scores: Float64Array,
  ): PairOutcome {
    scores.fill(-1);
    let anyCompared = false;
    let anyPass = false;
    for (const i of order) {
      const rt = runtimes[i]!;
      if (!this.blocks[i] && !rt.rule.mandatory) {
        // Probabilistic surname under a name, or a weak attribute: it cannot make the pair a candidate,
        // and its level mostly needs no score (equal values); the model scores it when the level needs it.
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
      const pass = s >= rt.rule.threshold;
      if (!pass && rt.rule.mandatory) return 'mandatory_failed';
      if (pass && this.blocks[i]) anyPass = true;
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

/**
 * Probabilistic model: the configured blocking attributes less the weak ones, those on which more than
 * one random pair in 500 agrees (value-stats.ts). When every blocking attribute is weak they all stay.
 */
function blockingAttributes(
  configured: readonly boolean[],
  stats: ValueStats | undefined,
  runtimes: readonly AttributeRuntime[],
): boolean[] {
  if (!stats) return configured as boolean[];
  const weak = weakAttributes(stats, runtimes, configured);
  const kept = configured.map((b, i) => b && !weak[i]);
  return kept.some((b) => b) ? kept : (configured as boolean[]);
}

/**
 * Per attribute: its values agree by chance more often than CHANCE_WEAK, or, with a fuzzy algorithm
 * (not a name), pass its threshold that often (false: too few records to tell).
 */
function weakAttributes(
  stats: ValueStats,
  runtimes: readonly AttributeRuntime[],
  configured: readonly boolean[],
): boolean[] {
  return runtimes.map(({ rule }, i) => {
    if ((stats.chanceAgreement(i) ?? 0) > CHANCE_WEAK) return true;
    const passes = configured[i] ? fuzzyPass(rule) : undefined;
    return passes !== undefined && (stats.chancePass(i, passes) ?? 0) > CHANCE_WEAK;
  });
}
