import type { OverlapFilter } from '../algorithms/kernel';

const EPS = 1e-9;

/**
 * The overlap bounds of an OverlapIndex's filter, cached by size: the smallest overlap any partner of a
 * size can require (which sets a value's prefix length), and the overlap a pair of sizes needs.
 * Partner sizes are capped at the largest value seen, so a larger value may lower a bound: admitSize
 * says when the index must rebuild its prefixes.
 */
export class OverlapBounds<P> {
  private sizeCap = 0;
  private lbCache = new Map<number, number>();
  private readonly needCache = new Map<number, number>();

  constructor(private readonly filter: OverlapFilter<P>) {}

  /** A build over values no larger than `cap`: every prefix length is computed afresh. */
  reset(cap: number): void {
    this.sizeCap = cap;
    this.lbCache = new Map();
  }

  /** Smallest overlap a partner of a value of size m can require (Infinity: no partner size passes). */
  lowerBound(m: number): number {
    let lb = this.lbCache.get(m);
    if (lb === undefined) {
      lb = this.computeLowerBound(m, this.sizeCap);
      this.lbCache.set(m, lb);
    }
    return lb;
  }

  private computeLowerBound(m: number, cap: number): number {
    const [lo, hi] = this.filter.partnerRange(m);
    let lb = Number.POSITIVE_INFINITY;
    for (let s = Math.max(0, lo); s <= Math.min(hi, cap); s++) {
      if (!this.filter.lengthOk(m, s)) continue;
      const need = Math.ceil(this.filter.minOverlap(m, s) - EPS);
      if (need < lb) lb = need;
    }
    return lb;
  }

  /**
   * Values up to `size` are appended: true when every prefix length computed so far still holds (the
   * cap is raised), false when the larger partner sizes lower one of them (the index rebuilds).
   */
  admitSize(size: number): boolean {
    if (size <= this.sizeCap) return true;
    for (const [m, lb] of this.lbCache) if (this.computeLowerBound(m, size) !== lb) return false;
    this.sizeCap = size;
    return true;
  }

  /** Tokens two values of sizes m and n must share to pass. */
  need(m: number, n: number): number {
    const key = m * 1048576 + n;
    let v = this.needCache.get(key);
    if (v === undefined) {
      v = Math.ceil(this.filter.minOverlap(m, n) - EPS);
      this.needCache.set(key, v);
    }
    return v;
  }
}
