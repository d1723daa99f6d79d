/**
 * A set of strings for the unique-value registry, which holds every unique value of every connector
 * account of a tenant (2M strings for 1M accounts with two unique attributes). In a Set, a value
 * costs its string (16 bytes plus one per character, rounded up to 8) and its entry (about 23
 * bytes); here, one byte per character in one growing buffer, its end offset (4 bytes) and a slot
 * of an open-addressing table (at most half full: 8 bytes). Strings with a character above U+00FF
 * (which one byte cannot hold) stay in a plain Set.
 */
import { grown } from '../typed-arrays';
import { EntryTable, type NumberedEntries } from './entry-table';

const EMPTY = -1;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the string's characters (equal to its bytes when every one is <= U+00FF), or -1 if one is not. */
function scan(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) return -1;
    h = Math.imul(h ^ c, FNV_PRIME);
  }
  return h >>> 0;
}

export class CompactStringSet implements NumberedEntries {
  private chars = new Uint8Array(1024);
  private used = 0;
  /** End offset in `chars` of each string (it starts where the previous one ends). */
  private ends = new Int32Array(64);
  private count = 0;
  /** Numbers of the narrow strings; the probe is `probe`. */
  private readonly table = new EntryTable(this);
  private probe = '';
  private readonly wide = new Set<string>();

  get size(): number {
    return this.count + this.wide.size;
  }

  has(s: string): boolean {
    const h = scan(s);
    if (h < 0) return this.wide.has(s);
    return this.table.entryAt(this.slotOf(s, h)) !== EMPTY;
  }

  /** Adds `s`; false when it was already there. */
  add(s: string): boolean {
    const h = scan(s);
    if (h < 0) {
      const before = this.wide.size;
      return this.wide.add(s).size !== before;
    }
    const slot = this.slotOf(s, h);
    if (this.table.entryAt(slot) !== EMPTY) return false;
    if (this.used + s.length > this.chars.length)
      this.chars = grown(this.chars, Math.max(2 * this.chars.length, this.used + s.length));
    for (let i = 0; i < s.length; i++) this.chars[this.used + i] = s.charCodeAt(i);
    this.used += s.length;
    if (this.count === this.ends.length) this.ends = grown(this.ends, 2 * this.ends.length);
    this.ends[this.count] = this.used;
    this.table.fill(slot, this.count++);
    return true;
  }

  private start(n: number): number {
    return n === 0 ? 0 : this.ends[n - 1]!;
  }

  private slotOf(s: string, h: number): number {
    this.probe = s;
    return this.table.slotOf(h);
  }

  isProbe(n: number): boolean {
    const s = this.probe;
    const from = this.start(n);
    if (this.ends[n]! - from !== s.length) return false;
    for (let i = 0; i < s.length; i++) if (this.chars[from + i] !== s.charCodeAt(i)) return false;
    return true;
  }

  hashOf(n: number): number {
    let h = FNV_OFFSET;
    for (let i = this.start(n); i < this.ends[n]!; i++) h = Math.imul(h ^ this.chars[i]!, FNV_PRIME);
    return h >>> 0;
  }
}
