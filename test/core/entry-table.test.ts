/**
 * The compact sets' hash table (src/core/aggregation/entry-table.ts): after entries are removed in
 * any order, every entry left is still found and no removed one is. Hashes are chosen to collide
 * (a few home slots for many entries) so that removals fall in the middle of long probe runs, and
 * runs wrap around the table's end.
 */
import { EntryTable, type NumberedEntries } from '../../src/core/aggregation/entry-table';

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Entries are keys (numbers) with given hashes; the probe is a key. */
class Keys implements NumberedEntries {
  readonly keys: number[] = [];
  readonly hashes: number[] = [];
  probe = -1;
  readonly table = new EntryTable(this);

  isProbe(n: number): boolean {
    return this.keys[n] === this.probe;
  }

  hashOf(n: number): number {
    return this.hashes[n]!;
  }

  /** The entry holding `key`, or -1. */
  find(key: number, hash: number): number {
    this.probe = key;
    return this.table.entryAt(this.table.slotOf(hash));
  }

  add(key: number, hash: number): void {
    this.probe = key;
    const slot = this.table.slotOf(hash);
    const n = this.keys.length;
    this.keys.push(key);
    this.hashes.push(hash);
    this.table.fill(slot, n);
  }

  remove(key: number, hash: number): void {
    this.probe = key;
    this.table.remove(this.table.slotOf(hash));
  }
}

describe('entry table', () => {
  it.each([
    ['four home slots', 4, 31],
    ['home slots near the end of the table (runs wrap)', 0, 32],
    ['spread hashes', 2 ** 32, 33],
  ])('finds every entry left after removals in random order: %s', (_label, homes, seed) => {
    const rnd = prng(seed);
    const t = new Keys();
    const hashOf = (key: number): number =>
      homes === 0 ? 0xfffffff0 + (key % 16) : homes === 4 ? (key % 4) * 1000 : (key * 2654435761) >>> 0;
    const live = new Map<number, number>();
    const gone = new Set<number>();
    const found: string[] = [];
    let next = 0;
    for (let round = 0; round < 40 && found.length === 0; round++) {
      for (let k = 0; k < 50; k++) {
        const key = next++;
        t.add(key, hashOf(key));
        live.set(key, hashOf(key));
      }
      const keys = [...live.keys()];
      for (let k = 0; k < 20; k++) {
        const key = keys.splice(Math.floor(rnd() * keys.length), 1)[0]!;
        t.remove(key, live.get(key)!);
        live.delete(key);
        gone.add(key);
      }
      for (const [key, hash] of live) if (t.find(key, hash) < 0) found.push(`key ${key} lost in round ${round}`);
      for (const key of gone)
        if (t.find(key, hashOf(key)) >= 0) found.push(`removed key ${key} found in round ${round}`);
    }
    expect(found.slice(0, 5)).toEqual([]);
    expect(live.size).toBe(40 * 30);
  });
});
