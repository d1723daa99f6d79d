/**
 * How often two records agree on an attribute by chance, from the first SAMPLE_RECORDS records a
 * matcher holds (the same records, in the same order, in the owner, every shard and the exhaustive
 * oracle, so each of them draws the same conclusions from it). The probabilistic model's blocking
 * uses it: an attribute on which one random pair in CHANCE_WEAK agrees (a department, a given name
 * alone, a surname alone, a code of a few values) carries too little evidence to make a candidate on
 * its own, and generating candidates from it would score hundreds of pairs per account.
 */

/** Records the statistic is taken from: enough for a share of 1/500, few enough to keep per record. */
const SAMPLE_RECORDS = 20_000;
/** Fewer records with a value than this: no conclusion (every attribute generates, as before). */
const MIN_SAMPLE = 500;
/** Chance agreement above this (one pair in 500: less than 9 bits of evidence) is weak. */
export const CHANCE_WEAK = 1 / 500;

export class ValueStats {
  /** Per attribute: value -> records of the sample holding it as their first value. */
  private readonly counts: Map<string, number>[];
  /** Per attribute: sum over values of count^2, and records with a value. */
  private readonly sumSq: number[];
  private readonly held: number[];
  /** Per sampled record and attribute: its first value ('' none), to undo on truncate. */
  private readonly values: string[][] = [];

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

  /** Share of pairs of different sampled records that hold the same value; undefined: too few records. */
  chanceAgreement(i: number): number | undefined {
    const m = this.held[i]!;
    if (m < MIN_SAMPLE) return undefined;
    return (this.sumSq[i]! - m) / (m * (m - 1));
  }
}
