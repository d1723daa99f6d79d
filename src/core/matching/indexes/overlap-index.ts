import type { OverlapFilter } from '../algorithms/kernel';
import type { CandidateCollector, CandidateIndex, ProbeInfo } from './candidate-collector';

/** Occurrence numbers turn a multiset of tokens into a set: key * 2^20 + occurrence (< 2^53). */
const OCC = 1048576;
const EPS = 1e-9;

/**
 * Prefix-filtered inverted index for "shared tokens >= bound" filters (q-gram count filter for
 * Levenshtein, character count for Jaro-Winkler, bigram overlap for Dice).
 *
 * Every value's tokens are numbered by occurrence (multiset -> set) and sorted by one global
 * order, rarest first. For value x of size m, oLb(m) is the smallest overlap any passing partner
 * can require. If x and y pass they share >= o >= max(oLb(x), oLb(y)) tokens, so their prefixes
 * of |x| - oLb(x) + 1 and |y| - oLb(y) + 1 tokens intersect: indexing prefixes and probing with
 * prefixes loses no pair. Values with oLb <= 0 (too short for the bound) are kept in an
 * "unfilterable" list that every probe walks (length filter only), and probe with all their
 * tokens. Candidates found are then checked with the exact length and overlap bounds.
 */
export class OverlapIndex<P> implements CandidateIndex {
  readonly lossless = true;
  private readonly filter: OverlapFilter<P>;
  private readonly entryRec: Int32Array;
  private readonly entrySize: Int32Array;
  private readonly tokStart: Int32Array;
  private readonly tokEnd: Int32Array;
  /** Tokens probed/indexed per entry: prefix length, all tokens when unfilterable, -1 when dead. */
  private readonly probeLen: Int32Array;
  private readonly pool: Int32Array;
  private readonly postStart: Int32Array;
  private readonly postings: Int32Array;
  private readonly unfilterable: Int32Array;
  private readonly recEntryStart: Int32Array;
  private readonly entryStamp: Int32Array;
  private stampCur = 0;
  private readonly needCache = new Map<number, number>();

  constructor(filter: OverlapFilter<P>, values: readonly (readonly P[])[]) {
    this.filter = filter;
    const n = values.length;
    let entries = 0;
    for (let r = 0; r < n; r++) entries += values[r]!.length;
    this.entryRec = new Int32Array(entries);
    this.entrySize = new Int32Array(entries);
    this.tokStart = new Int32Array(entries);
    this.tokEnd = new Int32Array(entries);
    this.probeLen = new Int32Array(entries);
    this.recEntryStart = new Int32Array(n + 1);
    this.entryStamp = new Int32Array(entries);

    // Phase 1: numbered tokens -> dense ids, with frequencies.
    const dict = new Map<number, number>();
    const freq: number[] = [];
    const ids: number[] = [];
    const keys: number[] = [];
    let e = 0;
    let maxSize = 0;
    for (let r = 0; r < n; r++) {
      this.recEntryStart[r] = e;
      for (const v of values[r]!) {
        keys.length = 0;
        filter.tokenKeys(v, keys);
        keys.sort((a, b) => a - b);
        this.entryRec[e] = r;
        const size = filter.size(v);
        this.entrySize[e] = size;
        if (size > maxSize) maxSize = size;
        this.tokStart[e] = ids.length;
        let occ = 0;
        for (let i = 0; i < keys.length; i++) {
          occ = i > 0 && keys[i] === keys[i - 1] ? occ + 1 : 0;
          const k = keys[i]! * OCC + occ;
          let id = dict.get(k);
          if (id === undefined) {
            id = freq.length;
            dict.set(k, id);
            freq.push(0);
          }
          freq[id]!++;
          ids.push(id);
        }
        this.tokEnd[e] = ids.length;
        e++;
      }
    }
    this.recEntryStart[n] = e;

    // Phase 2: global order, rarest first; each entry's tokens as sorted ranks.
    const order = Array.from(freq.keys()).sort((a, b) => freq[a]! - freq[b]! || a - b);
    const rank = new Int32Array(freq.length);
    order.forEach((id, i) => (rank[id] = i));
    this.pool = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) this.pool[i] = rank[ids[i]!]!;
    for (let x = 0; x < entries; x++) this.pool.subarray(this.tokStart[x]!, this.tokEnd[x]!).sort();

    // Phase 3: prefix lengths from the smallest overlap any partner size can require.
    const lbCache = new Map<number, number>();
    const lowerBound = (m: number): number => {
      let lb = lbCache.get(m);
      if (lb === undefined) {
        const [lo, hi] = filter.partnerRange(m);
        lb = Number.POSITIVE_INFINITY;
        for (let s = Math.max(0, lo); s <= Math.min(hi, maxSize); s++) {
          if (!filter.lengthOk(m, s)) continue;
          const need = Math.ceil(filter.minOverlap(m, s) - EPS);
          if (need < lb) lb = need;
        }
        lbCache.set(m, lb);
      }
      return lb;
    };
    const unfilterable: number[] = [];
    const postCount = new Int32Array(freq.length + 1);
    for (let x = 0; x < entries; x++) {
      const count = this.tokEnd[x]! - this.tokStart[x]!;
      const lb = lowerBound(this.entrySize[x]!);
      if (lb === Number.POSITIVE_INFINITY || lb > count) {
        this.probeLen[x] = -1; // no partner size can pass
      } else if (lb <= 0) {
        this.probeLen[x] = count;
        unfilterable.push(x);
      } else {
        const p = count - lb + 1;
        this.probeLen[x] = p;
        for (let i = 0; i < p; i++) postCount[this.pool[this.tokStart[x]! + i]!]!++;
      }
    }
    this.unfilterable = Int32Array.from(unfilterable);
    const unfilterableSet = new Uint8Array(entries);
    for (const x of unfilterable) unfilterableSet[x] = 1;

    // Phase 4: postings in CSR form, entries ascending (so records ascending).
    this.postStart = new Int32Array(freq.length + 1);
    for (let t = 0; t < freq.length; t++) this.postStart[t + 1] = this.postStart[t]! + postCount[t]!;
    this.postings = new Int32Array(this.postStart[freq.length]!);
    const fill = this.postStart.slice(0, freq.length);
    for (let x = 0; x < entries; x++) {
      if (this.probeLen[x]! <= 0 || unfilterableSet[x] === 1) continue;
      for (let i = 0; i < this.probeLen[x]!; i++) {
        const t = this.pool[this.tokStart[x]! + i]!;
        this.postings[fill[t]!++] = x;
      }
    }
  }

  /** Values of this attribute that no filter applies to (too short for the bound). */
  get unfilterableCount(): number {
    return this.unfilterable.length;
  }

  estimate(r: number): number {
    let work = 0;
    for (let q = this.recEntryStart[r]!; q < this.recEntryStart[r + 1]!; q++) {
      const p = this.probeLen[q]!;
      if (p < 0) continue;
      const s = this.tokStart[q]!;
      for (let i = 0; i < p; i++) {
        const t = this.pool[s + i]!;
        work += this.postStart[t + 1]! - this.postStart[t]!;
      }
      work += this.unfilterable.length;
    }
    return work;
  }

  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo {
    let fullScan = false;
    for (let q = this.recEntryStart[r]!; q < this.recEntryStart[r + 1]!; q++) {
      const p = this.probeLen[q]!;
      if (p < 0) continue;
      this.stampCur++;
      const s = this.tokStart[q]!;
      for (let i = 0; i < p; i++) {
        const t = this.pool[s + i]!;
        const end = this.postStart[t + 1]!;
        for (let k = this.postStart[t]!; k < end; k++) {
          const x = this.postings[k]!;
          const rec = this.entryRec[x]!;
          if (rec >= limit) break;
          this.check(q, x, rec, out);
        }
      }
      if (this.unfilterable.length > 0) {
        fullScan = true;
        for (let k = 0; k < this.unfilterable.length; k++) {
          const x = this.unfilterable[k]!;
          const rec = this.entryRec[x]!;
          if (rec >= limit) break;
          this.check(q, x, rec, out);
        }
      }
    }
    return { fullScan };
  }

  private check(q: number, x: number, rec: number, out: CandidateCollector): void {
    if (this.entryStamp[x] === this.stampCur || out.has(rec)) return;
    this.entryStamp[x] = this.stampCur;
    const m = this.entrySize[q]!;
    const n = this.entrySize[x]!;
    if (!this.filter.lengthOk(m, n)) return;
    const need = this.need(m, n);
    if (need > 0 && this.overlap(q, x, need) < need) return;
    out.add(rec);
  }

  private need(m: number, n: number): number {
    const key = m * 1048576 + n;
    let v = this.needCache.get(key);
    if (v === undefined) {
      v = Math.ceil(this.filter.minOverlap(m, n) - EPS);
      this.needCache.set(key, v);
    }
    return v;
  }

  /** Shared tokens of two entries (sorted rank arrays), stopping once `need` cannot be reached. */
  private overlap(a: number, b: number, need: number): number {
    const pool = this.pool;
    let i = this.tokStart[a]!;
    const ie = this.tokEnd[a]!;
    let j = this.tokStart[b]!;
    const je = this.tokEnd[b]!;
    let common = 0;
    while (i < ie && j < je) {
      if (common + (ie - i < je - j ? ie - i : je - j) < need) return common;
      const u = pool[i]!;
      const v = pool[j]!;
      if (u === v) {
        common++;
        i++;
        j++;
      } else if (u < v) i++;
      else j++;
    }
    return common;
  }
}
