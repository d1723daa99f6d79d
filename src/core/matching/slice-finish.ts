/**
 * Phase 2 of matching ("finish"): the blocked slices of one call, in order, become its result: the rules'
 * score aggregation or the probabilistic model's probabilities (its term frequencies live with the owner
 * of the records), then ranking, topK and the stats.
 */
import {
  ACCOUNT_COMPARED,
  ACCOUNT_MISSING_MANDATORY,
  ACCOUNT_WITHOUT_VALUES,
  type BlockedSlice,
  GENERATOR_COMBINED,
  GENERATOR_EXHAUSTIVE,
  GENERATOR_UNION,
} from './blocked-slice';
import type { EarlyLevels } from './probabilistic/early-levels';
import type { BlockedAccount, ProbabilisticModel } from './probabilistic/model';
import { type Steps, ticker } from './steps';
import { OUTCOMES, type CombinedGenerator } from './slice-blocking';
import {
  type Algorithm,
  type AttributeMatchRule,
  CANDIDATE_BUCKETS,
  type MatchResult,
  type MatchStats,
  type PotentialDuplicate,
} from './types';

/** What phase 2 reads of the engine that holds the records. */
export interface FinishContext {
  rules: readonly AttributeMatchRule[];
  ids: readonly string[];
  combined: CombinedGenerator | undefined;
  /** Probabilistic model only. */
  model: ProbabilisticModel | undefined;
  /** Candidates evaluated per account, by generator label (the candidates histogram metric). */
  observe: (label: string, k: number) => void;
}

export function emptyStats(): MatchStats {
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

/** Account k of a slice as the probabilistic model scores it (views, not copies: millions of pairs at 100k). */
function blockedAt(slice: BlockedSlice, k: number, B: number, A: number): BlockedAccount {
  const lo = slice.matchedStart[k]!;
  const hi = slice.matchedStart[k + 1]!;
  return {
    g: B + slice.from + k,
    candidates: slice.candidates.subarray(lo, hi),
    scores: slice.scores.subarray(lo * A, hi * A),
  };
}

/** The accounts of a slice that the probabilistic model scores, in order, appended to `blocked`. */
export function blockedAccounts(
  slice: BlockedSlice,
  B: number,
  A: number,
  blocked: BlockedAccount[] = [],
): BlockedAccount[] {
  for (let k = 0; k < slice.count; k++) {
    if (slice.status[k] === ACCOUNT_COMPARED && slice.matchedStart[k]! < slice.matchedStart[k + 1]!)
      blocked.push(blockedAt(slice, k, B, A));
  }
  return blocked;
}

/** Accounts between two yields of the slices' loop. */
const STEP = 4096;

/** Phase 2 in steps (steps.ts): the run matcher gives the event loop a turn between them. */
export function* finishSlices(
  engine: FinishContext,
  B: number,
  count: number,
  slices: readonly BlockedSlice[],
  topK: number,
  estimateOnly = false,
  early?: EarlyLevels,
): Steps<MatchResult> {
  const tick = ticker(STEP);
  const { rules, ids, model } = engine;
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
    if (model) blockedAccounts(slice, B, A, blocked);
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
        const { keyAttr, nameAttr } = engine.combined ?? { keyAttr: 0, nameAttr: 0 };
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
      // The model's accounts are taken once per slice (blockedAccounts), so they are chosen in one place.
      if (lo < hi && !model) {
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
      engine.observe(label, compared);
      if (tick()) yield;
    }
  }
  if (next !== count) throw new Error(`blocked slices cover ${next} of ${count} new accounts`);
  if (model && estimateOnly) {
    yield* model.prime(n, blocked, count, early);
  } else if (model) {
    const scored = yield* model.score(n, blocked, count, ids, B);
    stats.pairs.matched -= scored.below;
    stats.pairs.below_threshold += scored.below;
    for (const [accountId, found] of scored.duplicates) finish(accountId, found);
  }
  stats.candidatesMean = count > 0 ? candidatesTotal / count : 0;
  return { duplicates, stats };
}
