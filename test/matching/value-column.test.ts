/**
 * The probabilistic model's dictionary-encoded values (src/core/matching/probabilistic/value-column.ts)
 * must answer as the per-record strings and the Map of counts they replace: the term frequency of a
 * value weighs every exact agreement, so a count off by one changes scores. Checked against plain
 * arrays and a Map over random appends and truncations (a match call appends its batch and drops it),
 * with few distinct values (many holders each) and many (the table grows, collides, and loses entries
 * from the middle of probe runs when a truncation drops them).
 */
import { ValueColumn } from '../../src/core/matching/probabilistic/value-column';
import { chanceAgreement } from '../../src/core/matching/probabilistic/estimate';

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

class Reference {
  readonly rows: string[] = [];
  readonly counts = new Map<string, number>();
  push(v: string): void {
    this.rows.push(v);
    if (v !== '') this.counts.set(v, (this.counts.get(v) ?? 0) + 1);
  }
  truncate(n: number): void {
    while (this.rows.length > n) {
      const v = this.rows.pop()!;
      if (v === '') continue;
      const c = this.counts.get(v)! - 1;
      if (c === 0) this.counts.delete(v);
      else this.counts.set(v, c);
    }
  }
}

function mismatches(col: ValueColumn, ref: Reference): string[] {
  const out: string[] = [];
  if (col.size !== ref.rows.length) out.push(`size ${col.size} != ${ref.rows.length}`);
  if (col.distinct !== ref.counts.size) out.push(`distinct ${col.distinct} != ${ref.counts.size}`);
  ref.rows.forEach((v, r) => {
    if (col.value(r) !== v) out.push(`value(${r}) ${JSON.stringify(col.value(r))} != ${JSON.stringify(v)}`);
    const count = v === '' ? 0 : ref.counts.get(v)!;
    if (col.count(r) !== count) out.push(`count(${r}) of ${JSON.stringify(v)} ${col.count(r)} != ${count}`);
    if (col.idOf(r) < 0 !== (v === '')) out.push(`idOf(${r}) ${col.idOf(r)} for ${JSON.stringify(v)}`);
  });
  return out.slice(0, 10);
}

describe('value column', () => {
  it.each([
    ['few values, many holders each', 40, 27],
    ['mostly distinct values', 1_000_000, 28],
  ])('answers as per-record strings and a Map of counts: %s', (_label, spread, seed) => {
    const rnd = prng(seed);
    const col = new ValueColumn();
    const ref = new Reference();
    const value = (): string => (rnd() < 0.1 ? '' : `v${Math.floor(rnd() * spread)}`);
    const found: string[] = [];
    for (let round = 0; round < 60; round++) {
      // A baseline that grows, then a batch appended and dropped (as a match call does).
      const keep = ref.rows.length + Math.floor(rnd() * 400);
      while (ref.rows.length < keep) {
        const v = value();
        col.push(v);
        ref.push(v);
      }
      const batch = Math.floor(rnd() * 600);
      for (let k = 0; k < batch; k++) {
        const v = value();
        col.push(v);
        ref.push(v);
      }
      found.push(...mismatches(col, ref));
      const to = keep - Math.floor(rnd() * 50);
      col.truncate(to);
      ref.truncate(to);
      found.push(...mismatches(col, ref));
      if (found.length > 0) break;
    }
    expect(found).toEqual([]);
    expect(ref.rows.length).toBeGreaterThan(5_000);
    // The term-frequency statistic reads the same counts.
    expect(chanceAgreement(col.valueCounts())).toBeCloseTo(chanceAgreement(ref.counts.values()), 12);
  });

  it('numbers values in the order records first hold them, and keeps their first string', () => {
    const col = new ValueColumn();
    const smith = ['smi', 'th'].join('');
    col.push('');
    col.push(smith);
    col.push('jones');
    col.push('smith');
    expect([col.idOf(0), col.idOf(1), col.idOf(2), col.idOf(3)]).toEqual([-1, 0, 1, 0]);
    expect(col.text(0)).toBe(smith);
    expect([...col.values(3)]).toEqual(['', 'smith', 'jones']);
    expect([...col.valueCounts()]).toEqual([2, 1]);
    col.truncate(2);
    expect([col.distinct, col.count(1), col.size]).toEqual([1, 1, 2]);
    // A value dropped with its records is numbered anew when it comes back.
    col.push('jones');
    expect([col.idOf(2), col.count(2)]).toEqual([1, 1]);
  });
});
