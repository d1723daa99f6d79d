/**
 * A set of strings for the unique-value registry, which holds every unique value of every connector
 * account of a tenant (2M strings for 1M accounts with two unique attributes). In a Set, a value
 * costs its string (16 bytes plus one per character, rounded up to 8) and its entry (about 23
 * bytes); here, one byte per character in one growing buffer, its end offset (4 bytes) and a slot
 * of an open-addressing table (at most half full: 8 bytes). Strings with a character above U+00FF
 * (which one byte cannot hold) stay in a plain Set.
 */
const EMPTY = -1;

/** FNV-1a over the string's characters (equal to its bytes when every one is <= U+00FF), or -1 if one is not. */
function scan(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) return -1;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

export class CompactStringSet {
  private chars = new Uint8Array(1024);
  private used = 0;
  /** End offset in `chars` of each string (it starts where the previous one ends). */
  private ends = new Int32Array(64);
  private count = 0;
  /** Open addressing (linear probing): string number, or EMPTY. */
  private table = new Int32Array(128).fill(EMPTY);
  private readonly wide = new Set<string>();

  get size(): number {
    return this.count + this.wide.size;
  }

  has(s: string): boolean {
    const h = scan(s);
    if (h < 0) return this.wide.has(s);
    return this.table[this.slotOf(s, h)] !== EMPTY;
  }

  /** Adds `s`; false when it was already there. */
  add(s: string): boolean {
    const h = scan(s);
    if (h < 0) {
      const before = this.wide.size;
      return this.wide.add(s).size !== before;
    }
    const slot = this.slotOf(s, h);
    if (this.table[slot] !== EMPTY) return false;
    if (this.used + s.length > this.chars.length) {
      const chars = new Uint8Array(Math.max(2 * this.chars.length, this.used + s.length));
      chars.set(this.chars.subarray(0, this.used));
      this.chars = chars;
    }
    for (let i = 0; i < s.length; i++) this.chars[this.used + i] = s.charCodeAt(i);
    this.used += s.length;
    if (this.count === this.ends.length) {
      const ends = new Int32Array(2 * this.ends.length);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.ends[this.count] = this.used;
    this.table[slot] = this.count++;
    if (2 * this.count > this.table.length) this.rehash();
    return true;
  }

  private start(n: number): number {
    return n === 0 ? 0 : this.ends[n - 1]!;
  }

  /** The slot holding `s` (hash `h`), or the empty slot where it would go. */
  private slotOf(s: string, h: number): number {
    const mask = this.table.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const n = this.table[slot]!;
      if (n === EMPTY || this.equals(n, s)) return slot;
    }
  }

  private equals(n: number, s: string): boolean {
    const from = this.start(n);
    if (this.ends[n]! - from !== s.length) return false;
    for (let i = 0; i < s.length; i++) if (this.chars[from + i] !== s.charCodeAt(i)) return false;
    return true;
  }

  private rehash(): void {
    const table = new Int32Array(2 * this.table.length).fill(EMPTY);
    const mask = table.length - 1;
    for (let n = 0; n < this.count; n++) {
      let h = 0x811c9dc5;
      for (let i = this.start(n); i < this.ends[n]!; i++) h = Math.imul(h ^ this.chars[i]!, 0x01000193);
      let slot = (h >>> 0) & mask;
      while (table[slot] !== EMPTY) slot = (slot + 1) & mask;
      table[slot] = n;
    }
    this.table = table;
  }
}
