import type { KeyFilter } from '../algorithms/kernel';
import type { CandidateCollector, CandidateIndex, ProbeInfo } from './candidate-collector';

const NO_SCAN: ProbeInfo = { fullScan: false };

/** Exact blocking keys (phonetic codes, exact values, name tokens): key -> ascending record list. */
export class KeyIndex<P> implements CandidateIndex {
  readonly lossless: boolean;
  private readonly buckets = new Map<string, number[]>();
  private readonly recordKeys: string[][];

  constructor(filter: KeyFilter<P>, values: readonly (readonly P[])[]) {
    this.lossless = filter.lossless;
    this.recordKeys = new Array<string[]>(values.length);
    const keys: string[] = [];
    for (let r = 0; r < values.length; r++) {
      keys.length = 0;
      for (const v of values[r]!) filter.keys(v, keys);
      const unique = keys.length > 1 ? [...new Set(keys)] : keys.slice();
      this.recordKeys[r] = unique;
      for (const k of unique) {
        const bucket = this.buckets.get(k);
        if (bucket) bucket.push(r);
        else this.buckets.set(k, [r]);
      }
    }
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
}

const SCANNED: ProbeInfo = { fullScan: true };

/** No filter (threshold 0): every record with a value is a candidate. Counted as a full scan. */
export class ScanIndex<P> implements CandidateIndex {
  readonly lossless = true;
  private readonly withValue: number[] = [];

  constructor(values: readonly (readonly P[])[]) {
    for (let r = 0; r < values.length; r++) if (values[r]!.length > 0) this.withValue.push(r);
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
