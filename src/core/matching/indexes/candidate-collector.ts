/** The candidate records of one query, deduplicated with a stamp array (no allocation per query). */
export class CandidateCollector {
  private stamp: Int32Array;
  list: Int32Array;
  size = 0;
  private cur = 0;

  constructor(records: number) {
    this.stamp = new Int32Array(records);
    this.list = new Int32Array(records);
  }

  /** Grows (doubling) to hold records 0..records-1; kept across calls so a match costs no O(baseline) allocation. */
  ensure(records: number): void {
    if (records <= this.stamp.length) return;
    const cap = Math.max(records, this.stamp.length * 2, 1024);
    const stamp = new Int32Array(cap);
    stamp.set(this.stamp);
    this.stamp = stamp;
    this.list = new Int32Array(cap);
  }

  begin(): void {
    if (this.cur === 0x7fffffff) {
      this.stamp.fill(0);
      this.cur = 0;
    }
    this.cur++;
    this.size = 0;
  }

  has(rec: number): boolean {
    return this.stamp[rec] === this.cur;
  }

  add(rec: number): void {
    if (this.stamp[rec] !== this.cur) {
      this.stamp[rec] = this.cur;
      this.list[this.size++] = rec;
    }
  }

  /** Keeps the candidates `keep` accepts, in order; the others are forgotten (has() is false again). */
  retain(keep: (rec: number) => boolean): void {
    let n = 0;
    for (let k = 0; k < this.size; k++) {
      const rec = this.list[k]!;
      if (keep(rec)) this.list[n++] = rec;
      else this.stamp[rec] = 0;
    }
    this.size = n;
  }
}

/** What a probe did, for the stats. */
export interface ProbeInfo {
  /** True when the probe had to walk records no filter applies to. */
  fullScan: boolean;
}

/**
 * A candidate index over one attribute of records 0..n-1 (baseline first, then new records).
 * probe() adds every record < limit that can pass this attribute with record r (lossless
 * indexes) or that shares a blocking key (lossy ones).
 *
 * Incremental: the index reads the runtime's growing per-record value list. append(n) indexes the
 * records from its current count up to n; truncate(n) forgets records >= n (the new accounts of
 * one match() call are appended, probed, then truncated).
 */
export interface CandidateIndex {
  readonly lossless: boolean;
  /** Records indexed. */
  readonly count: number;
  append(n: number): void;
  truncate(n: number): void;
  /** Rough work of probing with record r (posting entries to visit). */
  estimate(r: number): number;
  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo;
  /**
   * Lossless indexes only, optional: drops from `out` the candidates that cannot pass this
   * attribute with record r (those without a value included). Used to intersect a mandatory
   * attribute's candidates with another mandatory attribute's, without walking the latter's
   * postings; costs about a membership test per candidate, far below scoring the pair.
   */
  refine?(r: number, out: CandidateCollector): void;
}
