import type { OverlapFilter } from '../algorithms/kernel';
import { withCapacity as grown } from '../../typed-arrays';
import type { CandidateCollector, CandidateIndex, ProbeInfo } from './candidate-collector';
import { OverlapBounds } from './overlap-bounds';

/** Occurrence numbers turn a multiset of tokens into a set: key * 2^20 + occurrence (< 2^53). */
const OCC = 1048576;
/** Appended records beyond max(this, records at the last build) trigger a rebuild (fresh token order). */
const MIN_REBUILD = 4096;

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
 *
 * Incremental: the argument above holds for ANY fixed total order of tokens. A build ranks the
 * tokens by frequency and stores postings in CSR form; records appended later keep those ranks,
 * a token never seen before gets a rank below every existing one (it is the rarest so far), and
 * their postings go to per-token lists after the CSR ones (records stay ascending). Once the
 * appended records outnumber the built ones the index is rebuilt, so the order stays close to
 * the frequencies at amortised O(1) per record. A larger value than any seen can lower oLb of
 * existing sizes only if a filter's bound were not monotone; that is checked, and rebuilds.
 */
export class OverlapIndex<P> implements CandidateIndex {
  readonly lossless = true;
  count = 0;
  private entries = 0;
  private poolLen = 0;
  private entryRec = new Int32Array(0);
  private entrySize = new Int32Array(0);
  private tokStart = new Int32Array(0);
  private tokEnd = new Int32Array(0);
  /** Tokens probed/indexed per entry: prefix length, all tokens when unfilterable, -1 when dead. */
  private probeLen = new Int32Array(0);
  private entryStamp = new Int32Array(0);
  private pool = new Int32Array(0);
  private recEntryStart = new Int32Array(1);
  /** Numbered token key -> rank in the global order. */
  private dict = new Map<number, number>();
  private lowRank = 0;
  private postStart = new Int32Array(1);
  private postings = new Int32Array(0);
  /** Postings of appended entries: by rank (>= 0), and for tokens new since the build by -rank-1. */
  private extraOld: (number[] | undefined)[] = [];
  private extraNew: number[][] = [];
  private unfilterable: number[] = [];
  private builtRecords = 0;
  private readonly bounds: OverlapBounds<P>;
  private stampCur = 0;
  private readonly keys: number[] = [];

  constructor(
    private readonly filter: OverlapFilter<P>,
    private readonly values: readonly (readonly P[])[],
    /** Smallest number of appended records that can trigger a rebuild (tests lower it). */
    private readonly minRebuild = MIN_REBUILD,
  ) {
    this.bounds = new OverlapBounds(filter);
    this.build(values.length);
  }

  /** Values of this attribute that no filter applies to (too short for the bound). */
  get unfilterableCount(): number {
    return this.unfilterable.length;
  }

  private build(n: number): void {
    const filter = this.filter;
    let entries = 0;
    for (let r = 0; r < n; r++) entries += this.values[r]!.length;
    this.entryRec = new Int32Array(entries);
    this.entrySize = new Int32Array(entries);
    this.tokStart = new Int32Array(entries);
    this.tokEnd = new Int32Array(entries);
    this.probeLen = new Int32Array(entries);
    this.entryStamp = new Int32Array(entries);
    this.recEntryStart = new Int32Array(n + 1);

    // Phase 1: numbered tokens -> dense ids, with frequencies.
    const dict = new Map<number, number>();
    const freq: number[] = [];
    const ids: number[] = [];
    const keys = this.keys;
    let e = 0;
    let maxSize = 0;
    for (let r = 0; r < n; r++) {
      this.recEntryStart[r] = e;
      for (const v of this.values[r]!) {
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
    for (const [k, id] of dict) dict.set(k, rank[id]!);
    this.dict = dict;
    this.lowRank = 0;
    this.pool = new Int32Array(ids.length);
    this.poolLen = ids.length;
    for (let i = 0; i < ids.length; i++) this.pool[i] = rank[ids[i]!]!;
    for (let x = 0; x < entries; x++) this.pool.subarray(this.tokStart[x]!, this.tokEnd[x]!).sort();

    // Phase 3: prefix lengths from the smallest overlap any partner size can require.
    this.bounds.reset(maxSize);
    this.unfilterable = [];
    const postCount = new Int32Array(freq.length + 1);
    for (let x = 0; x < entries; x++) {
      const p = this.prefix(x);
      if (p > 0 && this.unfilterable[this.unfilterable.length - 1] !== x) {
        for (let i = 0; i < p; i++) postCount[this.pool[this.tokStart[x]! + i]!]!++;
      }
    }

    // Phase 4: postings in CSR form, entries ascending (so records ascending).
    this.postStart = new Int32Array(freq.length + 1);
    for (let t = 0; t < freq.length; t++) this.postStart[t + 1] = this.postStart[t]! + postCount[t]!;
    this.postings = new Int32Array(this.postStart[freq.length]!);
    const fill = this.postStart.slice(0, freq.length);
    let u = 0;
    for (let x = 0; x < entries; x++) {
      if (this.unfilterable[u] === x) {
        u++;
        continue;
      }
      for (let i = 0; i < this.probeLen[x]!; i++) {
        const t = this.pool[this.tokStart[x]! + i]!;
        this.postings[fill[t]!++] = x;
      }
    }
    this.extraOld = [];
    this.extraNew = [];
    this.entries = entries;
    this.count = n;
    this.builtRecords = n;
  }

  /** Sets the entry's probe length (and the unfilterable list); returns the number of tokens to post. */
  private prefix(x: number): number {
    const count = this.tokEnd[x]! - this.tokStart[x]!;
    const lb = this.bounds.lowerBound(this.entrySize[x]!);
    if (lb === Number.POSITIVE_INFINITY || lb > count) {
      this.probeLen[x] = -1; // no partner size can pass
      return 0;
    }
    if (lb <= 0) {
      this.probeLen[x] = count;
      this.unfilterable.push(x);
      return 0;
    }
    this.probeLen[x] = count - lb + 1;
    return count - lb + 1;
  }

  append(n: number): void {
    if (n <= this.count) return;
    if (n - this.builtRecords > Math.max(this.builtRecords, this.minRebuild)) {
      this.build(n);
      return;
    }
    const filter = this.filter;
    const keys = this.keys;
    const first = this.entries;
    let e = first;
    let maxSize = 0;
    this.recEntryStart = grown(this.recEntryStart, n + 1);
    for (let r = this.count; r < n; r++) {
      this.recEntryStart[r] = e;
      const vals = this.values[r]!;
      if (vals.length > 0) this.growEntries(e + vals.length);
      for (const v of vals) {
        keys.length = 0;
        filter.tokenKeys(v, keys);
        keys.sort((a, b) => a - b);
        this.entryRec[e] = r;
        const size = filter.size(v);
        this.entrySize[e] = size;
        if (size > maxSize) maxSize = size;
        this.pool = grown(this.pool, this.poolLen + keys.length);
        const start = this.poolLen;
        this.tokStart[e] = start;
        let occ = 0;
        for (let i = 0; i < keys.length; i++) {
          occ = i > 0 && keys[i] === keys[i - 1] ? occ + 1 : 0;
          const k = keys[i]! * OCC + occ;
          let rank = this.dict.get(k);
          if (rank === undefined) {
            rank = --this.lowRank;
            this.dict.set(k, rank);
          }
          this.pool[this.poolLen++] = rank;
        }
        this.tokEnd[e] = this.poolLen;
        this.pool.subarray(start, this.poolLen).sort();
        e++;
      }
    }
    this.recEntryStart[n] = e;
    this.entries = e;
    this.count = n;
    if (!this.bounds.admitSize(maxSize)) {
      this.build(n);
      return;
    }
    for (let x = first; x < e; x++) {
      const p = this.prefix(x);
      const s = this.tokStart[x]!;
      for (let i = 0; i < p; i++) this.extraFor(this.pool[s + i]!).push(x);
    }
  }

  private growEntries(need: number): void {
    if (need <= this.entryRec.length) return;
    this.entryRec = grown(this.entryRec, need);
    this.entrySize = grown(this.entrySize, need);
    this.tokStart = grown(this.tokStart, need);
    this.tokEnd = grown(this.tokEnd, need);
    this.probeLen = grown(this.probeLen, need);
    this.entryStamp = grown(this.entryStamp, need);
  }

  private extraFor(t: number): number[] {
    if (t >= 0) return (this.extraOld[t] ??= []);
    return (this.extraNew[-t - 1] ??= []);
  }

  private extraOf(t: number): number[] | undefined {
    return t >= 0 ? this.extraOld[t] : this.extraNew[-t - 1];
  }

  /** Appended entries are the tails of their posting lists; built ones need a rebuild. */
  truncate(n: number): void {
    if (n >= this.count) return;
    if (n < this.builtRecords) {
      this.build(n);
      return;
    }
    const keep = this.recEntryStart[n]!;
    for (let x = this.entries - 1; x >= keep; x--) {
      const u = this.unfilterable;
      if (u.length > 0 && u[u.length - 1] === x) {
        u.pop();
        continue;
      }
      const s = this.tokStart[x]!;
      for (let i = 0; i < this.probeLen[x]!; i++) this.extraOf(this.pool[s + i]!)!.pop();
    }
    this.poolLen = keep > 0 ? this.tokEnd[keep - 1]! : 0;
    this.entries = keep;
    this.count = n;
  }

  estimate(r: number): number {
    let work = 0;
    for (let q = this.recEntryStart[r]!; q < this.recEntryStart[r + 1]!; q++) {
      const p = this.probeLen[q]!;
      if (p < 0) continue;
      const s = this.tokStart[q]!;
      for (let i = 0; i < p; i++) {
        const t = this.pool[s + i]!;
        if (t >= 0) work += this.postStart[t + 1]! - this.postStart[t]!;
        work += this.extraOf(t)?.length ?? 0;
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
        if (t >= 0) {
          const end = this.postStart[t + 1]!;
          for (let k = this.postStart[t]!; k < end; k++) {
            const x = this.postings[k]!;
            const rec = this.entryRec[x]!;
            if (rec >= limit) break;
            this.check(q, x, rec, out);
          }
        }
        const extra = this.extraOf(t);
        if (extra === undefined) continue;
        for (let k = 0; k < extra.length; k++) {
          const x = extra[k]!;
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
    const need = this.bounds.need(m, n);
    if (need > 0 && this.overlap(q, x, need) < need) return;
    out.add(rec);
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
