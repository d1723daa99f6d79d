import { type AttributeRuntime, prepareAttribute } from './attribute-runtime';
import { CandidateCollector, type CandidateIndex } from './indexes/candidate-collector';
import { candidatesObserver, recordMatchingStats } from './metrics';
import {
  type Algorithm,
  CANDIDATE_BUCKETS,
  type MatchOptions,
  type MatchRecord,
  type MatchResult,
  type MatchStats,
  type MatchingSettings,
  type PairOutcome,
  type PotentialDuplicate,
} from './types';

export interface Matcher {
  /** Add identities of the baseline (call before match; may be called several times). */
  addBaseline(records: Iterable<MatchRecord>): void;
  /**
   * Match new/changed accounts against the baseline and against each other. An account-account
   * pair is reported once: the later account (by position in newRecords) gets the earlier one as
   * candidate (candidateKind 'account'), so at most one of them becomes a new identity without review.
   */
  match(newRecords: readonly MatchRecord[], opts?: MatchOptions): MatchResult;
}

type Mode = 'index' | 'exhaustive';

/** Relative cost of scoring one pair, to test cheap mandatory attributes first. */
const SCORE_COST: Record<Algorithm, number> = {
  exact: 0,
  'double-metaphone': 1,
  levenshtein: 2,
  dice: 3,
  'jaro-winkler': 4,
  'name-matcher': 5,
};

/** The matcher: candidate indexes per attribute, exact scoring of the candidates only. */
export function buildMatcher(settings: MatchingSettings): Matcher {
  return new EngineMatcher(settings, 'index');
}

/** The oracle: scores every pair with the same rules. For tests, benchmarks and small inputs. */
export function buildExhaustiveMatcher(settings: MatchingSettings): Matcher {
  return new EngineMatcher(settings, 'exhaustive');
}

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

/** Ranking: overall score desc, identities before accounts, then candidate id. */
export function compareDuplicates(a: PotentialDuplicate, b: PotentialDuplicate): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.candidateKind !== b.candidateKind) return a.candidateKind === 'identity' ? -1 : 1;
  return a.candidateId < b.candidateId ? -1 : a.candidateId > b.candidateId ? 1 : 0;
}

class EngineMatcher implements Matcher {
  private readonly baseline: MatchRecord[] = [];

  constructor(
    private readonly settings: MatchingSettings,
    private readonly mode: Mode,
  ) {}

  addBaseline(records: Iterable<MatchRecord>): void {
    for (const r of records) this.baseline.push(r);
  }

  match(newRecords: readonly MatchRecord[], opts: MatchOptions = {}): MatchResult {
    const t0 = performance.now();
    const rules = this.settings.attributes;
    const topK = opts.topK ?? this.settings.reviewTopK;
    const B = this.baseline.length;
    const records: MatchRecord[] = this.baseline.concat(newRecords);
    const n = records.length;
    const stats = emptyStats();
    stats.accounts = newRecords.length;
    stats.baseline = B;

    // Mandatory attributes are evaluated first, cheapest algorithm first: a failure ends the pair.
    const runtimes: AttributeRuntime[] = rules.map((rule) => prepareAttribute(rule, records));
    const cost = (i: number): number => (rules[i]!.mandatory ? SCORE_COST[rules[i]!.algorithm] : 0);
    const order = runtimes
      .map((_, i) => i)
      .sort((a, b) => Number(rules[b]!.mandatory) - Number(rules[a]!.mandatory) || cost(a) - cost(b) || a - b);
    const mandatory = order.filter((i) => rules[i]!.mandatory);

    // Candidate generators: the mandatory attributes (one suffices per account), else all (union).
    const generatorIdx = this.mode === 'index' ? (mandatory.length > 0 ? mandatory : order) : [];
    const indexes = new Map<number, CandidateIndex>();
    for (const i of generatorIdx) indexes.set(i, runtimes[i]!.buildIndex());
    const t1 = performance.now();
    stats.buildMs = t1 - t0;

    const collector = new CandidateCollector(n);
    const scores = new Float64Array(rules.length);
    const duplicates = new Map<string, PotentialDuplicate[]>();
    const observers = new Map<string, (k: number) => void>();
    const observe = (label: string, k: number): void => {
      let o = observers.get(label);
      if (!o) observers.set(label, (o = candidatesObserver(label)));
      o(k);
    };
    let candidatesTotal = 0;

    for (let g = B; g < n; g++) {
      const account = records[g]!;
      if (mandatory.some((i) => !runtimes[i]!.hasValue(g))) {
        stats.accountsMissingMandatory++;
        if (!runtimes.some((rt) => rt.hasValue(g))) stats.accountsWithoutValues++;
        stats.candidatesHistogram[0]!++;
        continue;
      }
      if (!runtimes.some((rt) => rt.hasValue(g))) {
        stats.accountsWithoutValues++;
        stats.candidatesHistogram[0]!++;
        continue;
      }

      collector.begin();
      let label: string;
      if (this.mode === 'exhaustive') {
        for (let c = 0; c < g; c++) collector.add(c);
        label = 'exhaustive';
      } else {
        const chosen = this.chooseGenerators(g, generatorIdx, mandatory.length > 0, indexes, runtimes);
        for (const i of chosen) {
          const info = indexes.get(i)!.probe(g, g, collector);
          if (info.fullScan) {
            const alg: Algorithm = rules[i]!.algorithm;
            stats.fullScans[alg] = (stats.fullScans[alg] ?? 0) + 1;
          }
        }
        label = chosen.length === 1 ? rules[chosen[0]!]!.algorithm : 'union';
        const name = chosen.length === 1 ? rules[chosen[0]!]!.attribute : 'union';
        stats.generatorUse[name] = (stats.generatorUse[name] ?? 0) + 1;
      }

      let found: PotentialDuplicate[] | undefined;
      let compared = 0;
      for (let k = 0; k < collector.size; k++) {
        const c = collector.list[k]!;
        const candidate = records[c]!;
        if (candidate.id === account.id) continue;
        compared++;
        const outcome = this.evaluate(g, c, runtimes, order, scores);
        stats.pairs[outcome]++;
        if (outcome !== 'matched') continue;
        const perAttr: Record<string, number> = {};
        let sum = 0;
        let cnt = 0;
        for (let i = 0; i < rules.length; i++) {
          if (scores[i]! < 0) continue;
          perAttr[rules[i]!.attribute] = scores[i]!;
          sum += scores[i]!;
          cnt++;
        }
        (found ??= []).push({
          accountId: account.id,
          candidateId: candidate.id,
          candidateKind: c < B ? 'identity' : 'account',
          score: Math.round((sum / cnt) * 10) / 10,
          scores: perAttr,
        });
      }
      stats.pairsCompared += compared;
      candidatesTotal += compared;
      if (compared > stats.candidatesMax) stats.candidatesMax = compared;
      stats.candidatesHistogram[bucketOf(compared)]!++;
      observe(label, compared);
      if (found) {
        found.sort(compareDuplicates);
        if (found.length > topK) {
          stats.truncated += found.length - topK;
          found.length = topK;
        }
        duplicates.set(account.id, found);
        stats.accountsWithDuplicates++;
      }
    }
    stats.candidatesMean = newRecords.length > 0 ? candidatesTotal / newRecords.length : 0;
    stats.matchMs = performance.now() - t1;
    recordMatchingStats(stats);
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
    return [best];
  }

  private evaluate(a: number, b: number, runtimes: AttributeRuntime[], order: number[], scores: Float64Array): PairOutcome {
    scores.fill(-1);
    let anyCompared = false;
    let anyPass = false;
    for (const i of order) {
      const rt = runtimes[i]!;
      const s = rt.score(a, b);
      scores[i] = s;
      if (s < 0) {
        if (rt.rule.mandatory) return 'value_missing';
        continue;
      }
      anyCompared = true;
      if (s >= rt.rule.threshold) anyPass = true;
      else if (rt.rule.mandatory) return 'mandatory_failed';
    }
    if (!anyCompared) return 'value_missing';
    return anyPass ? 'matched' : 'below_threshold';
  }
}
