/**
 * The probabilistic (Fellegi-Sunter) model over the matcher's records: comparison levels per
 * attribute (record-features.ts, with the roles read from the values), parameters given or estimated
 * at the first match, term-frequency adjusted exact agreement, and the match probability of each
 * blocked candidate pair.
 */
import type { AttributeRuntime } from '../attribute-runtime';
import { FusionError } from '../../errors';
import type { LevelContribution, MatchRecord, ModelParameters, PotentialDuplicate } from '../types';
import { PRIOR_ATTRIBUTE, PRIOR_LEVEL } from '../types';
import { configuredRoles, detectRoles, readRoles, storeRoles } from './attribute-roles';
import { MISSING } from './comparators';
import { aliasKey, aliasPairsFrom, findDomainAliases } from './domain-aliases';
import { MODEL_STEP, type Steps, ticker } from '../steps';
import { chanceReport } from '../value-stats';
import { type CandidatePairs, estimateMSteps, type LevelTable, uFromCounts, withoutMatches } from './estimate';
import { DEFERRED_SCORE, RecordFeatures } from './record-features';
import type { BlockedAccount } from './blocked-account';
import { type EarlyLevels, levelPairs, levelsAhead, pairCount } from './early-levels';
import { randomPairCounts } from './random-pairs';

export { DEFERRED_SCORE, sharedTokens } from './record-features';
export type { BlockedAccount } from './blocked-account';

/** Records one person may hold (an identity and accounts from a few sources), for term frequencies. */
const PERSON_RECORDS = 5;
/** Other records holding a value held only by the pair compared (term frequencies). */
const TF_FLOOR = 0.5;
/**
 * An account of this call stands for its best candidate's person when that link is more likely
 * than not, whatever the reviewer's threshold: a later account that matches both records then does
 * not split its belief between them as if they were two people. With the reviewer's threshold (0.9)
 * as the bar, an identity and an earlier account linked at 0.5-0.9 competed as two people and a
 * later account's two true pairs could each fall below it.
 */
const SAME_PERSON = 0.5;

export class ProbabilisticModel {
  private readonly features: RecordFeatures;
  private params: ModelParameters | undefined;
  private m: LevelTable = [];
  private u: LevelTable = [];

  constructor(
    private readonly runtimes: readonly AttributeRuntime[],
    private readonly threshold: number,
    given: ModelParameters | undefined,
  ) {
    this.features = new RecordFeatures(runtimes);
    if (given) this.use(given);
  }

  private get rules() {
    return this.runtimes.map((rt) => rt.rule);
  }

  /**
   * Uses given parameters. They are matched to the configured attributes by name (the n-th entry of a
   * name to the n-th rule of that name), so a reordered attribute list reuses them.
   */
  use(p: ModelParameters): void {
    const rules = this.rules;
    const byName = new Map<string, ModelParameters['attributes']>();
    for (const a of p.attributes ?? []) byName.set(a.attribute, [...(byName.get(a.attribute) ?? []), a]);
    const ordered = rules.map((r) => byName.get(r.attribute)?.shift());
    const roles = readRoles(rules, p.extra?.roles) ?? configuredRoles(rules);
    const before = this.features.roles;
    this.features.setRoles(roles);
    const comparators = this.features.comparators;
    const fits =
      p.version === 1 &&
      p.attributes.length === rules.length &&
      ordered.every(
        (a, i) =>
          a !== undefined &&
          a.levels.length === comparators[i]!.levels.length &&
          a.levels.every((l, j) => l.level === comparators[i]!.levels[j] && l.m > 0 && l.u > 0),
      );
    if (!fits || !(p.prior > 0 && p.prior < 1)) {
      if (before) this.features.setRoles(before);
      throw new FusionError(
        'MATCHING_INVALID',
        'stored probabilistic model parameters do not fit the matching configuration: run a full aggregation to re-estimate them',
        { field: 'parameters', allowed: 'parameters estimated for the current matching.attributes' },
      );
    }
    const attributes = ordered as ModelParameters['attributes'];
    this.params = { ...p, attributes };
    this.features.aliases = new Set(aliasPairsFrom(p.extra?.domainAliases).map(([a, b]) => aliasKey(a, b)));
    this.m = attributes.map((a) => a.levels.map((l) => l.m));
    this.u = attributes.map((a) => a.levels.map((l) => l.u));
  }

  /** Estimates the parameters from these blocked accounts when none are in use (in steps, steps.ts). */
  *prime(n: number, blocked: readonly BlockedAccount[], accounts: number, early?: EarlyLevels): Steps<void> {
    if (!this.params) yield* this.estimate(n, blocked, accounts, early);
  }

  /** Without parameters: the roles the n records held give, set now (early-levels.ts). */
  *rolesAhead(n: number): Steps<void> {
    if (!this.params) yield* this.setRolesOf(n);
  }

  /** The roles the n records held give, set (the records derived with them). */
  private *setRolesOf(n: number): Steps<void> {
    const f = this.features;
    yield* f.setRolesSteps(detectRoles(this.rules, (i, r) => f.values[i]!.value(r), n));
  }

  /** Without parameters: these blocked accounts' levels with the roles set ahead (early-levels.ts). */
  levelsAhead(blocked: readonly BlockedAccount[]): EarlyLevels | undefined {
    return this.params ? undefined : levelsAhead(this.features, blocked);
  }

  parameters(): ModelParameters | undefined {
    return this.params;
  }

  append(records: readonly MatchRecord[]): void {
    this.features.append(records);
  }

  truncate(n: number): void {
    this.features.truncate(n);
  }

  /**
   * Estimates the parameters from random pairs (u) and the blocked pairs (m, prior); returns the
   * blocked pairs' levels (pair after pair, attributes.length each) for scoring them without a second pass.
   */
  private *estimate(
    n: number,
    blocked: readonly BlockedAccount[],
    accounts: number,
    early?: EarlyLevels,
  ): Steps<Int8Array> {
    const A = this.runtimes.length;
    const tick = ticker(MODEL_STEP);
    const f = this.features;
    const rules = this.rules;
    yield* this.setRolesOf(n);
    // Value 0 is the first value any record holds.
    const emailAttr = f.roles!.kinds.findIndex(
      (k, i) => k === 'email' && f.values[i]!.distinct > 0 && /@/.test(f.values[i]!.text(0)),
    );
    const domainAliases = emailAttr >= 0 ? findDomainAliases(f.values[emailAttr]!.values(n)) : [];
    f.aliases = new Set(domainAliases.map(([a, b]) => aliasKey(a, b)));
    const comparators = f.comparators;
    const { counts, draws, total } = yield* randomPairCounts(f, this.runtimes, n);
    this.u = uFromCounts(counts);
    comparators.forEach((c, i) => {
      // Levels only reachable when the names agree: random pairs cannot say how often non-matches
      // reach them, so they take the u of the level they stand in for.
      for (const [level, proxy] of c.uProxy) this.u[i]![level] = this.u[i]![proxy]!;
    });
    const size = pairCount(blocked);
    // Levels computed while the sources were read, with these roles: only the aliases are left to apply.
    const ready = early && early.roles === f.roles && early.levels.length === size * A ? early.levels : undefined;
    const pairs: CandidatePairs = { attributes: A, levels: ready ?? new Int8Array(size * A), start: [0], before: [] };
    if (!ready) yield* levelPairs(f, blocked, pairs.levels, true);
    let p = 0;
    for (const acc of blocked) {
      if (ready)
        for (let k = 0; k < acc.candidates.length; k++) f.applyAliases(acc.g, acc.candidates[k]!, ready, (p + k) * A);
      p += acc.candidates.length;
      pairs.start.push(p);
      pairs.before.push(acc.g);
      if (tick()) yield;
    }
    // Accounts without candidates still count in the prior's denominator.
    for (let k = blocked.length; k < accounts; k++) {
      pairs.start.push(p);
      pairs.before.push(0);
    }
    const neutral = comparators.map((c) => c.neutral);
    const assumed = comparators.map((c) => c.assumedM);
    let em = yield* estimateMSteps(pairs, this.u, neutral, assumed);
    // Random pairs include the true duplicates (about prior x accounts of all pairs): for a rare level
    // (an address both hold, a hyphenated surname) they are much of its count. u is how often
    // different people reach a level, so their expected share comes off, and m is estimated again.
    const truePairShare = (em.prior * accounts) / Math.max(total, 1);
    this.u = withoutMatches(this.u, em.m, truePairShare, draws);
    comparators.forEach((c, i) => {
      for (const [level, proxy] of c.uProxy) this.u[i]![level] = this.u[i]![proxy]!;
    });
    em = yield* estimateMSteps(pairs, this.u, neutral, assumed);
    this.m = em.m;
    this.params = {
      version: 1,
      estimatedAt: new Date().toISOString(),
      records: n,
      prior: em.prior,
      attributes: rules.map((rule, i) => ({
        attribute: rule.attribute,
        levels: comparators[i]!.levels.map((level, l) => ({ level, m: this.m[i]![l]!, u: this.u[i]![l]! })),
      })),
      extra: {
        kinds: f.roles!.kinds,
        roles: storeRoles(rules, f.roles!),
        neutral: Object.fromEntries(
          rules.map((r, i) => [r.attribute, [...comparators[i]!.neutral].map((l) => comparators[i]!.levels[l]!)]),
        ),
        ...chanceReport(rules, f.values, n),
        assumed: rules.flatMap((r, i) =>
          [...(comparators[i]!.assumedM ?? [])].map(
            ([l, m]) =>
              `${r.attribute} "${comparators[i]!.levels[l]}": m = ${m} (the data cannot tell it from namesakes)`,
          ),
        ),
        domainAliases,
        emIterations: em.iterations,
        candidatePairs: size,
        randomPairs: draws,
      },
    };
    return pairs.levels;
  }

  /**
   * Probabilistic duplicates of the blocked accounts (unsorted, not truncated) and how many blocked
   * pairs fell below the threshold. Estimates the parameters first when none were given. In steps (steps.ts).
   */
  *score(
    n: number,
    blocked: readonly BlockedAccount[],
    accounts: number,
    ids: readonly string[],
    B: number,
  ): Steps<{ duplicates: Map<string, PotentialDuplicate[]>; below: number }> {
    const known = this.params ? undefined : yield* this.estimate(n, blocked, accounts);
    const tick = ticker(MODEL_STEP);
    const prior = this.params!.prior;
    const f = this.features;
    const A = this.runtimes.length;
    const duplicates = new Map<string, PotentialDuplicate[]>();
    let lv: Int8Array<ArrayBufferLike> = new Int8Array(A);
    let below = 0;
    let p = 0;
    // Weights per level, once: only exact agreement depends on the record (its value's frequency).
    const levelWeight = f.comparators.map((c, i) => c.levels.map((_, l) => (l === 0 ? 0 : this.weight(i, l, 0))));
    const exactWeight = new Float64Array(A);
    // The person each record stands for: itself, or for an account of this call linked more likely
    // than not (SAME_PERSON), its best candidate's person. Records of one person do not compete for
    // an account's belief.
    const person = new Int32Array(n);
    for (let r = 0; r < n; r++) person[r] = r;
    let sums = new Float64Array(16);
    let levels = new Int8Array(16 * A);
    for (const acc of blocked) {
      for (let i = 0; i < A; i++) exactWeight[i] = this.weight(i, 0, acc.g);
      // One-to-one, as the parameters were estimated: the account has at most one true match among
      // the records before it (prior), each of them equally likely before any attribute is compared.
      const lambda = prior / Math.max(acc.g, 1);
      const K = acc.candidates.length;
      if (K > sums.length) {
        sums = new Float64Array(K * 2);
        levels = new Int8Array(K * 2 * A);
      }
      for (let k = 0; k < K; k++) {
        const c = acc.candidates[k]!;
        if (known) lv = known.subarray(p * A, p * A + A);
        else f.pairLevels(acc.g, c, acc.scores, k * A, lv);
        levels.set(lv, k * A);
        p++;
        let sum = 0;
        for (let i = 0; i < A; i++) {
          const l = lv[i]!;
          if (l > 0) sum += levelWeight[i]![l]!;
          else if (l === 0) sum += exactWeight[i]!;
        }
        sums[k] = sum;
      }
      // Each candidate against "no match" (1 - prior) and the other people's candidates (their best
      // record each): when nearly every account has a match, 1 - prior alone would let any pair pass.
      const best = new Map<number, number>();
      for (let k = 0; k < K; k++) {
        const who = person[acc.candidates[k]!]!;
        best.set(who, Math.max(best.get(who) ?? 0, lambda * 2 ** sums[k]!));
      }
      let others = 0;
      for (const v of best.values()) others += v;
      let top = -1;
      let topProbability = 0;
      for (let k = 0; k < K; k++) {
        const c = acc.candidates[k]!;
        const rivals = others - best.get(person[c]!)!;
        const priorWeight = Math.log2(lambda / (1 - prior + rivals));
        const matchWeight = sums[k]! + priorWeight;
        const probability = 1 / (1 + 2 ** -matchWeight);
        if (probability > topProbability) {
          top = c;
          topProbability = probability;
        }
        if (probability < this.threshold) {
          below++;
          continue;
        }
        const list = duplicates.get(ids[acc.g]!) ?? [];
        list.push(
          this.explain(acc, k, levels.subarray(k * A, k * A + A), ids, B, probability, matchWeight, priorWeight),
        );
        duplicates.set(ids[acc.g]!, list);
      }
      if (top >= 0 && topProbability >= SAME_PERSON) person[acc.g] = person[top]!;
      if (tick()) yield;
    }
    return { duplicates, below };
  }

  /** The reported pair: explanations only for these (most blocked pairs fall below the threshold). */
  private explain(
    acc: BlockedAccount,
    k: number,
    lv: ArrayLike<number>,
    ids: readonly string[],
    B: number,
    probability: number,
    matchWeight: number,
    priorWeight: number,
  ): PotentialDuplicate {
    const A = this.runtimes.length;
    const c = acc.candidates[k]!;
    const explanation: LevelContribution[] = [];
    const scores: Record<string, number> = {};
    for (let i = 0; i < A; i++) {
      const attribute = this.runtimes[i]!.rule.attribute;
      let s = acc.scores[k * A + i]!;
      if (s === DEFERRED_SCORE) s = this.runtimes[i]!.score(acc.g, c);
      if (s >= 0) scores[attribute] = s;
      const l = lv[i]!;
      explanation.push(
        l === MISSING
          ? { attribute, level: 'missing', weight: 0 }
          : { attribute, level: this.features.comparators[i]!.levels[l]!, weight: round2(this.weight(i, l, acc.g)) },
      );
    }
    explanation.push({ attribute: PRIOR_ATTRIBUTE, level: PRIOR_LEVEL, weight: round2(priorWeight) });
    return {
      accountId: ids[acc.g]!,
      candidateId: ids[c]!,
      candidateKind: c < B ? 'identity' : 'account',
      score: Math.round(probability * 1000) / 10,
      scores,
      probability,
      matchWeight: round2(matchWeight),
      explanation,
    };
  }

  /** log2(m/u); exact agreement uses the value's own frequency (agreeing on Smith weighs less). */
  private weight(i: number, l: number, record: number): number {
    const f = this.features;
    const c = f.comparators[i]!;
    if (c.neutral.has(l)) return 0;
    const m = this.m[i]![l]!;
    if (l !== 0) return Math.log2(m / this.u[i]![l]!);
    const n = f.size;
    const count = f.values[i]!.count(record) || 1;
    // Other people holding the value: the records holding it less the pair itself (under "same
    // person" both are that person), at least half a record (a value only the pair holds is rarer
    // among other people than one in n, by how much the records cannot say).
    let uTf = Math.max(count - 2, TF_FLOOR) / Math.max(n - 1, 1);
    // Identifiers and addresses are unique to a person by design: a value held by one person's few
    // records (the identity and its accounts) says nothing through its count, and its random-pair u
    // is the better estimate when lower. Only a value held by many (a placeholder) weighs less.
    if (count <= PERSON_RECORDS && (c.kind === 'identifier' || c.kind === 'email')) uTf = Math.min(uTf, this.u[i]![0]!);
    return Math.log2(m / uTf);
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
