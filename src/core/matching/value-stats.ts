/**
 * How often two records agree on an attribute by chance, from the first SAMPLE_RECORDS records a
 * matcher holds (the same records, in the same order, in the owner, every shard and the exhaustive
 * oracle, so each of them draws the same conclusions from it). The probabilistic model's blocking
 * uses it: an attribute on which one random pair in CHANCE_WEAK agrees (a department, a given name
 * alone, a surname alone, a code of a few values) carries too little evidence to make a candidate on
 * its own, and generating candidates from it would score hundreds of pairs per account.
 */

import { scoreValues } from './algorithms';
import { attributeKind } from './probabilistic/comparators';
import { chanceAgreement, seededRandom } from './probabilistic/estimate';
import type { AttributeMatchRule } from './types';

/** Records the statistic is taken from: enough for a share of 1/500, few enough to keep per record. */
const SAMPLE_RECORDS = 20_000;
/** Fewer records with a value than this: no conclusion (every attribute generates, as before). */
const MIN_SAMPLE = 500;
/** Chance agreement above this (one pair in 500: less than 9 bits of evidence) is weak. */
export const CHANCE_WEAK = 1 / 500;
/** Pairs scored for a fuzzy threshold's chance of passing (a share of 1/500 is 20 of them). */
const PASS_PAIRS = 10_000;
const PASS_SEED = 500;

export class ValueStats {
  /** Per attribute: value -> records of the sample holding it as their first value. */
  private readonly counts: Map<string, number>[];
  /** Per attribute: sum over values of count^2, and records with a value. */
  private readonly sumSq: number[];
  private readonly held: number[];
  /** Per sampled record and attribute: its first value ('' none), to undo on truncate. */
  private readonly values: string[][] = [];
  /** Per attribute: chancePass of the sample's first `records` records. */
  private readonly passed = new Map<number, { records: number; share: number | undefined }>();

  constructor(attributes: number) {
    this.counts = Array.from({ length: attributes }, () => new Map());
    this.sumSq = new Array<number>(attributes).fill(0);
    this.held = new Array<number>(attributes).fill(0);
  }

  /** Records numbered from `at` on, each as its attributes' first normalised values ('' none). */
  append(at: number, firstValues: (k: number, i: number) => string, count: number): void {
    const A = this.counts.length;
    for (let k = 0; k < count && at + k < SAMPLE_RECORDS; k++) {
      const row: string[] = [];
      for (let i = 0; i < A; i++) {
        const v = firstValues(k, i);
        row.push(v);
        if (v === '') continue;
        const c = this.counts[i]!.get(v) ?? 0;
        this.counts[i]!.set(v, c + 1);
        this.sumSq[i]! += 2 * c + 1;
        this.held[i]!++;
      }
      this.values.push(row);
    }
  }

  truncate(n: number): void {
    for (const [i, p] of this.passed) if (p.records > n) this.passed.delete(i);
    while (this.values.length > n) {
      const row = this.values.pop()!;
      row.forEach((v, i) => {
        if (v === '') return;
        const c = this.counts[i]!.get(v)!;
        if (c === 1) this.counts[i]!.delete(v);
        else this.counts[i]!.set(v, c - 1);
        this.sumSq[i]! -= 2 * c - 1;
        this.held[i]!--;
      });
    }
  }

  /**
   * The sample is full: no record appended from now on changes a statistic (only a truncate below
   * SAMPLE_RECORDS would), so a blocking decided from it now stays the one the last record will see.
   */
  get complete(): boolean {
    return this.values.length >= SAMPLE_RECORDS;
  }

  /**
   * Share of pairs of different sampled records whose values pass `passes` (a fuzzy threshold):
   * what chanceAgreement is for equal values, where near values pass too (E10023 and E10024 at
   * levenshtein 80, surnames sharing their first letters at Jaro-Winkler 85). Scored on PASS_PAIRS
   * pairs drawn with a fixed seed from the sample's first power-of-two records (all of them once
   * complete): a function of those records alone, so every holder concludes the same, and scored
   * again only when the sample doubles or is cut below them. undefined: too few records.
   */
  chancePass(i: number, passes: (a: string, b: string) => boolean): number | undefined {
    const records = passRecords(this.values.length);
    if (records < MIN_SAMPLE) return undefined;
    const known = this.passed.get(i);
    if (known?.records === records) return known.share;
    const share = passShare(records, (r) => this.values[r]![i]!, passes);
    this.passed.set(i, { records, share });
    return share;
  }

  /** Share of pairs of different sampled records that hold the same value; undefined: too few records. */
  chanceAgreement(i: number): number | undefined {
    const m = this.held[i]!;
    if (m < MIN_SAMPLE) return undefined;
    return (this.sumSq[i]! - m) / (m * (m - 1));
  }
}

/**
 * Whether a pair passes the rule's threshold, for a rule judged by its pass rate (a fuzzy
 * algorithm, not a name: a name blocks whatever its rate, it is the one link of a duplicate with no
 * address and another employee number; an e-mail blocks on its local part, exact); else undefined.
 */
export function fuzzyPass(rule: AttributeMatchRule): ((a: string, b: string) => boolean) | undefined {
  const kind = attributeKind(rule);
  if (rule.algorithm === 'exact' || kind === 'name' || kind === 'email') return undefined;
  return (a, b) => (scoreValues(rule.algorithm, a, b) ?? -1) >= rule.threshold;
}

/**
 * The records a pass share is read from, of a sample of `size`: the first power of two of them, all
 * once the sample is complete. A function of those records alone, so the blocking of every holder and
 * the tuning report conclude the same.
 */
function passRecords(size: number): number {
  if (size >= SAMPLE_RECORDS) return SAMPLE_RECORDS;
  return size < 1 ? 0 : 2 ** Math.floor(Math.log2(size));
}

/**
 * Share of PASS_PAIRS pairs of different records among the first `records` (value(r): '' none) whose
 * values pass, drawn with a fixed seed among those holding one; undefined: fewer than MIN_SAMPLE hold one.
 */
function passShare(
  records: number,
  value: (record: number) => string,
  passes: (a: string, b: string) => boolean,
): number | undefined {
  const held: string[] = [];
  for (let r = 0; r < records; r++) if (value(r) !== '') held.push(value(r));
  if (held.length < MIN_SAMPLE) return undefined;
  const rnd = seededRandom(PASS_SEED);
  let pass = 0;
  for (let k = 0; k < PASS_PAIRS; k++) {
    const a = Math.floor(rnd() * held.length);
    let b = Math.floor(rnd() * (held.length - 1));
    if (b >= a) b++;
    if (passes(held[a]!, held[b]!)) pass++;
  }
  return pass / PASS_PAIRS;
}

/**
 * For the tuning report (stored with the parameters), per attribute: its chance agreement over all
 * n records, and for a rule judged by its pass rate (fuzzyPass) its pass share over the records the
 * blocking reads (the model holds the same records first): why it makes no candidates on its own.
 */
export function chanceReport(
  rules: readonly AttributeMatchRule[],
  columns: readonly { value(r: number): string; valueCounts(): Iterable<number> }[],
  n: number,
): { chanceAgreement: Record<string, number>; chancePass: Record<string, number> } {
  const chancePass: Record<string, number> = {};
  rules.forEach((rule, i) => {
    const passes = fuzzyPass(rule);
    const share = passes ? passShare(passRecords(n), (r) => columns[i]!.value(r), passes) : undefined;
    if (share !== undefined) chancePass[rule.attribute] = share;
  });
  const chance = rules.map((r, i) => [r.attribute, chanceAgreement(columns[i]!.valueCounts())]);
  return { chanceAgreement: Object.fromEntries(chance), chancePass };
}
