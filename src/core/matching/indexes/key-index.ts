import type { KeyFilter } from '../algorithms/kernel';
import type { CandidateCollector, CandidateIndex, ProbeInfo } from './candidate-collector';

const NO_SCAN: ProbeInfo = { fullScan: false };

/** Exact blocking keys (phonetic codes, exact values, name tokens): key -> ascending record list. */
export class KeyIndex<P> implements CandidateIndex {
  readonly lossless: boolean;
  private readonly buckets = new Map<string, number[]>();
  private readonly recordKeys: string[][] = [];
  private readonly keys: string[] = [];

  constructor(
    private readonly filter: KeyFilter<P>,
    private readonly values: readonly (readonly P[])[],
  ) {
    this.lossless = filter.lossless;
    this.append(values.length);
  }

  get count(): number {
    return this.recordKeys.length;
  }

  append(n: number): void {
    const keys = this.keys;
    for (let r = this.recordKeys.length; r < n; r++) {
      keys.length = 0;
      for (const v of this.values[r]!) this.filter.keys(v, keys);
      const unique = keys.length > 1 ? [...new Set(keys)] : keys.slice();
      this.recordKeys.push(unique);
      for (const k of unique) {
        const bucket = this.buckets.get(k);
        if (bucket) bucket.push(r);
        else this.buckets.set(k, [r]);
      }
    }
  }

  /** Records are appended in ascending order, so the dropped ones are the buckets' tails. */
  truncate(n: number): void {
    for (let r = this.recordKeys.length - 1; r >= n; r--) {
      for (const k of this.recordKeys[r]!) {
        const bucket = this.buckets.get(k)!;
        bucket.pop();
        if (bucket.length === 0) this.buckets.delete(k);
      }
    }
    if (this.recordKeys.length > n) this.recordKeys.length = n;
  }

  /** Record r's keys, deduplicated (for the combined key and name index). */
  keysOf(r: number): readonly string[] {
    return this.recordKeys[r]!;
  }

  estimate(r: number): number {
    let n = 0;
    for (const k of this.recordKeys[r]!) n += this.buckets.get(k)?.length ?? 0;
    return n;
  }

  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo {
    for (const k of this.recordKeys[r]!) {
      const bucket = this.buckets.get(k);
      if (!bucket) continue;
      for (let i = 0; i < bucket.length; i++) {
        const c = bucket[i]!;
        if (c >= limit) break;
        out.add(c);
      }
    }
    return NO_SCAN;
  }

  /** A candidate can pass only by sharing a key with r (lossless filters). */
  refine(r: number, out: CandidateCollector): void {
    const mine = this.recordKeys[r]!;
    out.retain((c) => {
      for (const k of this.recordKeys[c]!) if (mine.includes(k)) return true;
      return false;
    });
  }
}

const SCANNED: ProbeInfo = { fullScan: true };

/** No filter (threshold 0): every record with a value is a candidate. Counted as a full scan. */
export class ScanIndex<P> implements CandidateIndex {
  readonly lossless = true;
  private readonly withValue: number[] = [];
  count = 0;

  constructor(private readonly values: readonly (readonly P[])[]) {
    this.append(values.length);
  }

  append(n: number): void {
    for (let r = this.count; r < n; r++) if (this.values[r]!.length > 0) this.withValue.push(r);
    if (n > this.count) this.count = n;
  }

  truncate(n: number): void {
    while (this.withValue.length > 0 && this.withValue[this.withValue.length - 1]! >= n) this.withValue.pop();
    if (this.count > n) this.count = n;
  }

  estimate(): number {
    return this.withValue.length;
  }

  probe(_r: number, limit: number, out: CandidateCollector): ProbeInfo {
    for (const c of this.withValue) {
      if (c >= limit) break;
      out.add(c);
    }
    return SCANNED;
  }
}
