/**
 * The probabilistic (Fellegi-Sunter) model over the matcher's records: comparison levels per
 * attribute, parameters given or estimated at the first match, term-frequency adjusted exact
 * agreement, and the match probability of each blocked candidate pair.
 */
import type { AttributeRuntime } from '../attribute-runtime';
import { FusionError } from '../../errors';
import type { NameValue } from '../algorithms/name-similarity';
import { attributeValues, nameTokens } from '../normalize';
import {
  type LevelContribution,
  type MatchRecord,
  type ModelParameters,
  PRIOR_ATTRIBUTE,
  PRIOR_LEVEL,
  type PotentialDuplicate,
} from '../types';
import {
  type Comparator,
  EMAIL_ALIAS_DOMAIN,
  EMAIL_FROM_OTHER_NAMES,
  type EmailParts,
  MISSING,
  NAME_SURNAME_CHANGED,
  SURNAME_IMPLIED,
  attributeKind,
  comparatorFor,
  emailLevel,
  emailParts,
} from './comparators';
import { aliasKey, aliasPairsFrom, findDomainAliases } from './domain-aliases';
import { type CandidatePairs, estimateM, type LevelTable, seededRandom, uFromCounts } from './estimate';

/** Distinct e-mail domains kept as one string each. */
const MAX_INTERNED_DOMAINS = 10_000;

/**
 * The name matcher's token list of the same value when it holds exactly these tokens (it keeps at
 * most MAX_NAME_TOKENS), else the list given.
 */
export function sharedTokens(tokens: string[], prepared: unknown): string[] {
  if (typeof prepared !== 'object' || prepared === null || !('tokens' in prepared)) return tokens;
  const other = (prepared as NameValue).tokens;
  if (other.length !== tokens.length) return tokens;
  for (let i = 0; i < tokens.length; i++) if (other[i] !== tokens[i]) return tokens;
  return other;
}

/** Random pairs drawn for u. */
const U_SAMPLE = 100_000;
/** Records one person may hold (an identity and accounts from a few sources), for term frequencies. */
const PERSON_RECORDS = 5;

/**
 * Score of an attribute that does not block (a surname under a name) left to the model: both records
 * hold a value, the score is computed only when the level needs it (BlockedAccount.scores).
 */
export const DEFERRED_SCORE = -2;

export interface BlockedAccount {
  /** Record number of the account. */
  g: number;
  /** Record numbers of its blocked candidates (they passed the mandatory attributes). */
  candidates: ArrayLike<number>;
  /**
   * Algorithm scores per candidate and attribute (-1 missing, DEFERRED_SCORE not computed yet),
   * candidates.length * attributes.
   */
  scores: ArrayLike<number>;
}

export class ProbabilisticModel {
  private readonly comparators: Comparator[];
  /** First normalised value per attribute and record ('' missing). */
  private readonly values: string[][];
  /** Name tokens per record (for the e-mail's dependence on the names). */
  private readonly names: string[][] = [];
  /** nameTokens of each record's value, per attribute, for the name and surname attributes only. */
  private readonly tokens: string[][][];
  /** The e-mail attribute's address of each record split and compared with its names, once. */
  private readonly email: EmailParts[] = [];
  /** Value -> records holding it, per attribute (term frequencies). */
  private readonly freq: Map<string, number>[];
  private readonly nameAttr: number;
  private readonly surnameAttr: number;
  private readonly emailAttr: number;
  private params: ModelParameters | undefined;
  /** Alias domain pairs (aliasKey) of the parameters in use. */
  private aliases = new Set<string>();
  private m: LevelTable = [];
  private u: LevelTable = [];

  constructor(
    private readonly runtimes: readonly AttributeRuntime[],
    private readonly threshold: number,
    given: ModelParameters | undefined,
  ) {
    const rules = runtimes.map((rt) => rt.rule);
    this.comparators = rules.map(comparatorFor);
    this.values = rules.map(() => []);
    this.freq = rules.map(() => new Map());
    this.tokens = rules.map(() => []);
    this.nameAttr = rules.findIndex((r) => attributeKind(r) === 'name');
    this.surnameAttr = rules.findIndex((r) => attributeKind(r) === 'surname');
    this.emailAttr = rules.findIndex((r) => attributeKind(r) === 'email');
    if (given) this.use(given);
  }

  /**
   * Uses given parameters. They are matched to the configured attributes by name (the n-th entry of a
   * name to the n-th rule of that name), so a reordered attribute list reuses them.
   */
  use(p: ModelParameters): void {
    const rules = this.runtimes.map((rt) => rt.rule);
    const byName = new Map<string, ModelParameters['attributes']>();
    for (const a of p.attributes ?? []) byName.set(a.attribute, [...(byName.get(a.attribute) ?? []), a]);
    const ordered = rules.map((r) => byName.get(r.attribute)?.shift());
    const fits =
      p.version === 1 &&
      p.attributes.length === rules.length &&
      ordered.every(
        (a, i) =>
          a !== undefined &&
          a.levels.length === this.comparators[i]!.levels.length &&
          a.levels.every((l, j) => l.level === this.comparators[i]!.levels[j] && l.m > 0 && l.u > 0),
      );
    if (!fits || !(p.prior > 0 && p.prior < 1)) {
      throw new FusionError(
        'MATCHING_INVALID',
        'stored probabilistic model parameters do not fit the matching configuration: run a full aggregation to re-estimate them',
        { field: 'parameters', allowed: 'parameters estimated for the current matching.attributes' },
      );
    }
    const attributes = ordered as ModelParameters['attributes'];
    this.params = { ...p, attributes };
    this.aliases = new Set(aliasPairsFrom(p.extra?.domainAliases).map(([a, b]) => aliasKey(a, b)));
    this.m = attributes.map((a) => a.levels.map((l) => l.m));
    this.u = attributes.map((a) => a.levels.map((l) => l.u));
  }

  /** Estimates the parameters from these blocked accounts when none are in use. */
  prime(n: number, blocked: readonly BlockedAccount[], accounts: number): void {
    if (!this.params) this.estimate(n, blocked, accounts);
  }

  parameters(): ModelParameters | undefined {
    return this.params;
  }

  /**
   * Keeps per record the first value of each attribute, its name tokens and its address's parts.
   * The runtimes hold the same records (appended first, same numbering): their strings and token
   * lists are shared where equal rather than kept twice (a few hundred bytes per record at 1M).
   */
  append(records: readonly MatchRecord[]): void {
    const rules = this.runtimes.map((rt) => rt.rule);
    const { nameAttr, surnameAttr } = this;
    const base = this.names.length;
    records.forEach((rec, k) => {
      const r = base + k;
      rules.forEach((rule, i) => {
        let v = attributeValues(rec.attributes[rule.attribute])[0] ?? '';
        const prepared = v === '' ? undefined : this.runtimes[i]!.first(r);
        if (prepared === v) v = prepared;
        this.values[i]!.push(v);
        if (v !== '') this.freq[i]!.set(v, (this.freq[i]!.get(v) ?? 0) + 1);
        if (i === nameAttr || i === surnameAttr) this.tokens[i]!.push(sharedTokens(nameTokens(v), prepared));
      });
      let names: string[] = nameAttr >= 0 ? this.tokens[nameAttr]!.at(-1)! : [];
      if (surnameAttr >= 0 && names.length < 2) names = names.concat(this.tokens[surnameAttr]!.at(-1)!);
      this.names.push(names);
      if (this.emailAttr >= 0) this.email.push(emailParts(this.values[this.emailAttr]!.at(-1)!, names, this.domainOf));
    });
  }

  /** One string per e-mail domain, while there are few (a tenant's handful; not an attacker's million). */
  private readonly domains = new Map<string, string>();
  private readonly domainOf = (domain: string): string => {
    const known = this.domains.get(domain);
    if (known !== undefined) return known;
    if (this.domains.size < MAX_INTERNED_DOMAINS) this.domains.set(domain, domain);
    return domain;
  };

  truncate(n: number): void {
    if (n >= this.names.length) return;
    this.values.forEach((col, i) => {
      for (let r = n; r < col.length; r++) {
        const v = col[r]!;
        if (v === '') continue;
        const c = this.freq[i]!.get(v)! - 1;
        if (c === 0) this.freq[i]!.delete(v);
        else this.freq[i]!.set(v, c);
      }
      col.length = n;
      if (this.tokens[i]!.length > n) this.tokens[i]!.length = n;
    });
    this.names.length = n;
    if (this.email.length > n) this.email.length = n;
  }

  /** Levels of a pair; scores[off + i]: the algorithm's score on attribute i (-1 missing). */
  private pairLevels(a: number, b: number, scores: ArrayLike<number>, off: number, out: Int8Array): void {
    for (let i = 0; i < this.comparators.length; i++) {
      const v = this.values[i]!;
      const t = this.tokens[i]!;
      let score = scores[off + i]!;
      // Equal values are level 0 whatever the score (>= 0: both hold a value); others need it.
      if (score === DEFERRED_SCORE) score = v[a] === v[b] ? 100 : this.runtimes[i]!.score(a, b);
      out[i] =
        i === this.emailAttr
          ? emailLevel(v[a]!, v[b]!, score, this.email[a]!, this.email[b]!)
          : this.comparators[i]!.level(v[a]!, v[b]!, score, this.names[a]!, this.names[b]!, t[a], t[b]);
    }
    const e = this.emailAttr;
    // One local part at two domains of one organisation: the same mailbox.
    if (e >= 0 && (out[e] === 1 || out[e] === 2) && this.aliases.size > 0) {
      const pa = this.email[a]!;
      const pb = this.email[b]!;
      if (pa.local === pb.local && this.aliases.has(aliasKey(pa.domain, pb.domain))) out[e] = EMAIL_ALIAS_DOMAIN;
    }
    const n = this.nameAttr;
    const s = this.surnameAttr;
    // A full name that holds the surname on both sides already counted the surname's agreement
    // (its exact and fuzzy levels were learned on pairs that mostly share the surname).
    if (n >= 0 && s >= 0 && out[n]! >= 0 && out[s] === 0) {
      const inA = this.tokens[n]![a]!;
      const inB = this.tokens[n]![b]!;
      const surname = this.tokens[s]![a]!;
      if (surname.every((t) => inA.includes(t) && inB.includes(t))) out[s] = SURNAME_IMPLIED;
    }
    if (n < 0 || out[n] !== NAME_SURNAME_CHANGED) return;
    // A changed surname the full name already counted: the surname attribute and an address built
    // from the names change with it.
    if (s >= 0 && out[s]! > SURNAME_IMPLIED) out[s] = SURNAME_IMPLIED;
    if (e >= 0 && out[e]! >= 0 && out[e] !== 0) {
      const pa = this.email[a]!;
      const pb = this.email[b]!;
      if (pa.local !== pb.local && pa.fromNames && pb.fromNames) {
        out[e] = EMAIL_FROM_OTHER_NAMES;
      }
    }
  }

  /**
   * Estimates the parameters from random pairs (u) and the blocked pairs (m, prior); returns the
   * blocked pairs' levels (pair after pair, attributes.length each) for scoring them without a second pass.
   */
  private estimate(n: number, blocked: readonly BlockedAccount[], accounts: number): Int8Array {
    const A = this.runtimes.length;
    const domainAliases = this.emailAttr >= 0 ? findDomainAliases(this.values[this.emailAttr]!.slice(0, n)) : [];
    this.aliases = new Set(domainAliases.map(([a, b]) => aliasKey(a, b)));
    const counts: LevelTable = this.comparators.map((c) => c.levels.map(() => 0));
    const rnd = seededRandom(n * 7919 + A);
    const sc = new Float64Array(A);
    const lv = new Int8Array(A);
    const total = (n * (n - 1)) / 2;
    const draws = Math.min(U_SAMPLE, total);
    for (let s = 0; s < draws; s++) {
      let a: number;
      let b: number;
      if (total <= U_SAMPLE) {
        // Small input: every pair once (s-th pair in row order).
        a = Math.floor((1 + Math.sqrt(1 + 8 * s)) / 2);
        b = s - (a * (a - 1)) / 2;
      } else {
        a = Math.floor(rnd() * n);
        b = Math.floor(rnd() * (n - 1));
        if (b >= a) b++;
      }
      for (let i = 0; i < A; i++) sc[i] = this.runtimes[i]!.score(a, b);
      this.pairLevels(a, b, sc, 0, lv);
      for (let i = 0; i < A; i++) if (lv[i] !== MISSING) counts[i]![lv[i]!]!++;
    }
    this.u = uFromCounts(counts);
    this.comparators.forEach((c, i) => {
      // Levels only reachable when the names agree: random pairs cannot say how often non-matches
      // reach them, so they take the u of the level they stand in for.
      for (const [level, proxy] of c.uProxy) this.u[i]![level] = this.u[i]![proxy]!;
    });
    let size = 0;
    for (const acc of blocked) size += acc.candidates.length;
    const pairs: CandidatePairs = { attributes: A, levels: new Int8Array(size * A), start: [0], before: [] };
    let p = 0;
    for (const acc of blocked) {
      for (let k = 0; k < acc.candidates.length; k++) {
        this.pairLevels(acc.g, acc.candidates[k]!, acc.scores, k * A, lv);
        pairs.levels.set(lv, p * A);
        p++;
      }
      pairs.start.push(p);
      pairs.before.push(acc.g);
    }
    // Accounts without candidates still count in the prior's denominator.
    for (let k = blocked.length; k < accounts; k++) {
      pairs.start.push(p);
      pairs.before.push(0);
    }
    const em = estimateM(
      pairs,
      this.u,
      this.comparators.map((c) => c.neutral),
      this.comparators.map((c) => c.identifierMismatch),
    );
    this.m = em.m;
    this.params = {
      version: 1,
      estimatedAt: new Date().toISOString(),
      records: n,
      prior: em.prior,
      attributes: this.runtimes.map((rt, i) => ({
        attribute: rt.rule.attribute,
        levels: this.comparators[i]!.levels.map((level, l) => ({ level, m: this.m[i]![l]!, u: this.u[i]![l]! })),
      })),
      extra: {
        kinds: this.comparators.map((c) => c.kind),
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
   * pairs fell below the threshold. Estimates the parameters first when none were given.
   */
  score(
    n: number,
    blocked: readonly BlockedAccount[],
    accounts: number,
    ids: readonly string[],
    B: number,
  ): { duplicates: Map<string, PotentialDuplicate[]>; below: number } {
    const known = this.params ? undefined : this.estimate(n, blocked, accounts);
    const prior = this.params!.prior;
    const A = this.runtimes.length;
    const rules = this.runtimes.map((rt) => rt.rule);
    const duplicates = new Map<string, PotentialDuplicate[]>();
    let lv: Int8Array<ArrayBufferLike> = new Int8Array(A);
    let below = 0;
    let p = 0;
    // Weights per level, once: only exact agreement depends on the record (its value's frequency).
    const levelWeight = this.comparators.map((c, i) => c.levels.map((_, l) => (l === 0 ? 0 : this.weight(i, l, 0))));
    const exactWeight = new Float64Array(A);
    for (const acc of blocked) {
      for (let i = 0; i < A; i++) exactWeight[i] = this.weight(i, 0, acc.g);
      // One-to-one, as the parameters were estimated: the account has at most one true match among
      // the records before it (prior), each of them equally likely before any attribute is compared.
      // Each candidate is judged on its own evidence against "the account has no match" (1 - prior),
      // not against the other candidates: several records of one person must not split its belief.
      const lambda = prior / Math.max(acc.g, 1);
      const priorWeight = Math.log2(lambda / (1 - prior));
      for (let k = 0; k < acc.candidates.length; k++) {
        const c = acc.candidates[k]!;
        if (known) lv = known.subarray(p * A, p * A + A);
        else this.pairLevels(acc.g, c, acc.scores, k * A, lv);
        p++;
        let sum = 0;
        for (let i = 0; i < A; i++) {
          const l = lv[i]!;
          if (l > 0) sum += levelWeight[i]![l]!;
          else if (l === 0) sum += exactWeight[i]!;
        }
        const matchWeight = sum + priorWeight;
        const probability = 1 / (1 + 2 ** -matchWeight);
        if (probability < this.threshold) {
          below++;
          continue;
        }
        // Explanations only for the pairs reported: most blocked pairs fall below the threshold.
        const explanation: LevelContribution[] = [];
        const scores: Record<string, number> = {};
        for (let i = 0; i < A; i++) {
          let s = acc.scores[k * A + i]!;
          if (s === DEFERRED_SCORE) s = this.runtimes[i]!.score(acc.g, c);
          if (s >= 0) scores[rules[i]!.attribute] = s;
          const l = lv[i]!;
          explanation.push(
            l === MISSING
              ? { attribute: rules[i]!.attribute, level: 'missing', weight: 0 }
              : {
                  attribute: rules[i]!.attribute,
                  level: this.comparators[i]!.levels[l]!,
                  weight: round2(this.weight(i, l, acc.g)),
                },
          );
        }
        explanation.push({ attribute: PRIOR_ATTRIBUTE, level: PRIOR_LEVEL, weight: round2(priorWeight) });
        const list = duplicates.get(ids[acc.g]!) ?? [];
        list.push({
          accountId: ids[acc.g]!,
          candidateId: ids[c]!,
          candidateKind: c < B ? 'identity' : 'account',
          score: Math.round(probability * 1000) / 10,
          scores,
          probability,
          matchWeight: round2(matchWeight),
          explanation,
        });
        duplicates.set(ids[acc.g]!, list);
      }
    }
    return { duplicates, below };
  }

  /** log2(m/u); exact agreement uses the value's own frequency (agreeing on Smith weighs less). */
  private weight(i: number, l: number, record: number): number {
    if (this.comparators[i]!.neutral.has(l)) return 0;
    const m = this.m[i]![l]!;
    if (l !== 0) return Math.log2(m / this.u[i]![l]!);
    const n = this.names.length;
    const count = this.freq[i]!.get(this.values[i]![record]!) ?? 1;
    // Others holding the value among the other records; at least one (the pair itself).
    let uTf = Math.max(count - 1, 1) / Math.max(n - 1, 1);
    // Identifiers and addresses are unique to a person by design: a value held by one person's few
    // records (the identity and its accounts) says nothing through its count, and its random-pair u
    // is the better estimate when lower. Only a value held by many (a placeholder) weighs less.
    const kind = this.comparators[i]!.kind;
    if (count <= PERSON_RECORDS && (kind === 'identifier' || kind === 'email')) uTf = Math.min(uTf, this.u[i]![0]!);
    return Math.log2(m / uTf);
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
