/** The candidate records of one query, deduplicated with a stamp array (no allocation per query). */
export class CandidateCollector {
  private readonly stamp: Int32Array;
  readonly list: Int32Array;
  size = 0;
  private cur = 0;

  constructor(records: number) {
    this.stamp = new Int32Array(records);
    this.list = new Int32Array(records);
  }

  begin(): void {
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
 */
export interface CandidateIndex {
  readonly lossless: boolean;
  /** Rough work of probing with record r (posting entries to visit). */
  estimate(r: number): number;
  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo;
}
