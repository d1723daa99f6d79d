/**
 * Ids a run holds by the million (connector account keys, source account ids, identity ids), each
 * numbered once: id <-> dense number. Platform ids are 32 lowercase hex digits and connector keys
 * are lowercase UUIDs: as JavaScript strings they cost 48 and 56 bytes, plus about 35 for each Map
 * entry that holds one. Here such an id is its 128 bits in a typed array (16 bytes) and a slot of an
 * open-addressing hash table (8 bytes at most half full), and the number it gets is the index into
 * further typed arrays that replace the Maps. Any other id (upper case, other lengths, unicode) is
 * kept as a string in a Map; an id reads back exactly as it was given.
 */

import { grown } from '../typed-arrays';
import { EntryTable, type NumberedEntries } from './entry-table';

/** How the 128 bits of an entry were written; other ids have no bits. */
const HEX = 1;
const UUID = 2;
const OTHER = 3;
const EMPTY = -1;

const HEX_BYTE: string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  if (c >= 97 && c <= 102) return c - 87; // a-f (lower case only: the id must read back as given)
  return -1;
}

/** Parsed words, reused (one id at a time). */
const words = new Uint32Array(4);

/** Where a UUID has its dashes (8-4-4-4-12). */
function isDash(kind: number, at: number): boolean {
  return kind === UUID && (at === 8 || at === 13 || at === 18 || at === 23);
}

/** HEX or UUID with `words` filled, or OTHER. */
function parse(id: string): number {
  const kind = id.length === 32 ? HEX : id.length === 36 ? UUID : OTHER;
  if (kind === OTHER) return OTHER;
  let w = 0;
  let n = 0;
  let word = 0;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (isDash(kind, i)) {
      if (c !== 45) return OTHER;
      continue;
    }
    const v = nibble(c);
    if (v < 0) return OTHER;
    word = ((word << 4) | v) >>> 0;
    if (++n === 8) {
      words[w++] = word;
      word = 0;
      n = 0;
    }
  }
  return kind;
}

function hashWords(kind: number): number {
  let h = Math.imul(kind, 0x9e3779b1);
  for (let i = 0; i < 4; i++) {
    h = Math.imul(h ^ words[i]!, 0x85ebca6b);
    h ^= h >>> 13;
  }
  return (h ^ (h >>> 16)) >>> 0;
}

export class IdPool implements NumberedEntries {
  private count = 0;
  private bits = new Uint32Array(4 * 64);
  private kinds = new Uint8Array(64);
  /** Numbers of the HEX and UUID ids (the others are in the Maps); the probe is `words` and `probeKind`. */
  private readonly table = new EntryTable(this);
  private probeKind = OTHER;
  private readonly others = new Map<string, number>();
  private readonly otherIds = new Map<number, string>();

  /** Ids numbered so far (numbers 0 .. size - 1). */
  get size(): number {
    return this.count;
  }

  /** The id's number, or -1 when it has none. */
  find(id: string): number {
    const kind = parse(id);
    if (kind === OTHER) return this.others.get(id) ?? -1;
    return this.table.entryAt(this.slotOf(kind));
  }

  /** The id's number, numbering it when new. */
  add(id: string): number {
    const kind = parse(id);
    if (kind === OTHER) {
      const known = this.others.get(id);
      if (known !== undefined) return known;
      const n = this.append(OTHER);
      this.others.set(id, n);
      this.otherIds.set(n, id);
      return n;
    }
    const slot = this.slotOf(kind);
    const known = this.table.entryAt(slot);
    if (known !== EMPTY) return known;
    const n = this.append(kind);
    this.bits.set(words, 4 * n);
    this.table.fill(slot, n);
    return n;
  }

  /** The id numbered `n`, as it was given. */
  id(n: number): string {
    if (n < 0 || n >= this.count) throw new RangeError(`No id numbered ${n}`);
    const kind = this.kinds[n]!;
    if (kind === OTHER) return this.otherIds.get(n)!;
    let out = '';
    for (let w = 0; w < 4; w++) {
      const word = this.bits[4 * n + w]!;
      for (let shift = 24; shift >= 0; shift -= 8) {
        if (isDash(kind, out.length)) out += '-';
        out += HEX_BYTE[(word >>> shift) & 0xff]!;
      }
    }
    return out;
  }

  private append(kind: number): number {
    const n = this.count++;
    if (n >= this.kinds.length) {
      this.kinds = grown(this.kinds, 2 * this.kinds.length);
      this.bits = grown(this.bits, 2 * this.bits.length);
    }
    this.kinds[n] = kind;
    return n;
  }

  private slotOf(kind: number): number {
    this.probeKind = kind;
    return this.table.slotOf(hashWords(kind));
  }

  isProbe(n: number): boolean {
    const b = 4 * n;
    const bits = this.bits;
    return (
      this.kinds[n] === this.probeKind &&
      bits[b] === words[0] &&
      bits[b + 1] === words[1] &&
      bits[b + 2] === words[2] &&
      bits[b + 3] === words[3]
    );
  }

  hashOf(n: number): number {
    for (let w = 0; w < 4; w++) words[w] = this.bits[4 * n + w]!;
    return hashWords(this.kinds[n]!);
  }
}
