/** No number (a column's value where none was set). */
export const NONE = -1;

/**
 * Int32 values indexed by a dense number (an id pool's), NONE where unset, grown on demand: a
 * Map<number, number> entry costs about 35 bytes, a slot here 4.
 */
export class NumberColumn {
  private values = new Int32Array(64).fill(NONE);

  get(n: number): number {
    return n >= 0 && n < this.values.length ? this.values[n]! : NONE;
  }

  set(n: number, value: number): void {
    if (n < 0) throw new RangeError(`No slot ${n}`);
    if (n >= this.values.length) {
      const next = new Int32Array(Math.max(2 * this.values.length, n + 1)).fill(NONE);
      next.set(this.values);
      this.values = next;
    }
    this.values[n] = value;
  }
}
