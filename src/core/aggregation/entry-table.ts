/**
 * The hash table of the compact sets (IdPool, CompactStringSet): their entries live in typed arrays
 * of their own and are known by a dense number; the table holds only those numbers. Open
 * addressing with linear probing, kept at most half full (8 bytes per entry at most), doubled as
 * it fills. The owner hashes and compares: it holds the value being looked up, so a lookup
 * allocates nothing.
 */
export interface NumberedEntries {
  /** Whether entry `n` equals the value the owner is looking up now. */
  isProbe(n: number): boolean;
  /** The hash of entry `n` (as given for it to slotOf()), to place it again when the table grows. */
  hashOf(n: number): number;
}

const EMPTY = -1;

export class EntryTable {
  private slots = new Int32Array(128).fill(EMPTY);
  private filled = 0;

  constructor(private readonly entries: NumberedEntries) {}

  /** The slot holding the probe (hash `hash`), or the empty slot where it would go. */
  slotOf(hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const n = this.slots[slot]!;
      if (n === EMPTY || this.entries.isProbe(n)) return slot;
    }
  }

  /** The entry in `slot`, or -1 when it is empty. */
  entryAt(slot: number): number {
    return this.slots[slot]!;
  }

  /** Puts entry `n` in the empty `slot` slotOf() returned for it. */
  fill(slot: number, n: number): void {
    this.slots[slot] = n;
    if (2 * ++this.filled > this.slots.length) this.grow();
  }

  /**
   * Empties `slot` (slotOf() found the entry there). Linear probing has no holes to leave: the
   * entries after it that probed past it move back, so every lookup still finds them.
   */
  remove(slot: number): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    let hole = slot;
    slots[hole] = EMPTY;
    this.filled--;
    for (let s = (hole + 1) & mask; slots[s] !== EMPTY; s = (s + 1) & mask) {
      const n = slots[s]!;
      // n may fill the hole when the hole lies on its probe path (from its home slot up to s).
      if (((s - this.entries.hashOf(n)) & mask) >= ((s - hole) & mask)) {
        slots[hole] = n;
        slots[s] = EMPTY;
        hole = s;
      }
    }
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(2 * old.length).fill(EMPTY);
    const mask = slots.length - 1;
    for (const n of old) {
      if (n === EMPTY) continue;
      let slot = this.entries.hashOf(n) & mask;
      while (slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      slots[slot] = n;
    }
    this.slots = slots;
  }
}
