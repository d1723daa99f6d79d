/**
 * Ids a run holds by the million (connector account keys, source account ids, identity ids), each
 * numbered once: id <-> dense number. Platform ids are 32 lowercase hex digits and connector keys
 * are lowercase UUIDs: as JavaScript strings they cost 48 and 56 bytes, plus about 35 for each Map
 * entry that holds one. Here such an id is its 128 bits in a typed array (16 bytes) and a slot of an
 * open-addressing hash table (8 bytes at most half full), and the number it gets is the index into
 * further typed arrays that replace the Maps. Any other id (upper case, other lengths, unicode) is
 * kept as a string in a Map; an id reads back exactly as it was given.
 */

/** How the 128 bits of an entry were written; other ids have no bits. */
const HEX = 1;
const UUID = 2;
const OTHER = 3;
const EMPTY = -1;
/** Where a UUID has its dashes (8-4-4-4-12). */
const DASHES = [8, 13, 18, 23];

const HEX_BYTE: string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  if (c >= 97 && c <= 102) return c - 87; // a-f (lower case only: the id must read back as given)
  return -1;
}

/** Parsed words, reused (one id at a time). */
const words = new Uint32Array(4);

/** HEX or UUID with `words` filled, or OTHER. */
function parse(id: string): number {
  let kind: number;
  if (id.length === 32) kind = HEX;
  else if (id.length === 36 && DASHES.every((i) => id.charCodeAt(i) === 45)) kind = UUID;
  else return OTHER;
  let w = 0;
  let n = 0;
  let word = 0;
  for (let i = 0; i < id.length; i++) {
    if (kind === UUID && (i === 8 || i === 13 || i === 18 || i === 23)) continue;
    const v = nibble(id.charCodeAt(i));
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

function grownCopy<T extends Uint32Array | Int32Array | Uint8Array>(a: T, length: number): T {
  const next = new (a.constructor as new (n: number) => T)(length);
  next.set(a);
  return next;
}

export class IdPool {
  private count = 0;
  private bits = new Uint32Array(4 * 64);
  private kinds = new Uint8Array(64);
  /** Open addressing (linear probing): entry number, or EMPTY. At most half full. */
  private table = new Int32Array(128).fill(EMPTY);
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
    const slot = this.slotOf(kind);
    return this.table[slot]!;
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
    const known = this.table[slot]!;
    if (known !== EMPTY) return known;
    const n = this.append(kind);
    this.bits.set(words, 4 * n);
    this.table[slot] = n;
    if (2 * this.count > this.table.length) this.rehash();
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
        const at = out.length;
        if (kind === UUID && (at === 8 || at === 13 || at === 18 || at === 23)) out += '-';
        out += HEX_BYTE[(word >>> shift) & 0xff]!;
      }
    }
    return out;
  }

  private append(kind: number): number {
    const n = this.count++;
    if (n >= this.kinds.length) {
      this.kinds = grownCopy(this.kinds, 2 * this.kinds.length);
      this.bits = grownCopy(this.bits, 2 * this.bits.length);
    }
    this.kinds[n] = kind;
    return n;
  }

  /** The slot holding the parsed id (`words`, `kind`), or the empty slot where it would go. */
  private slotOf(kind: number): number {
    const mask = this.table.length - 1;
    for (let slot = hashWords(kind) & mask; ; slot = (slot + 1) & mask) {
      const n = this.table[slot]!;
      if (n === EMPTY || this.holds(n, kind)) return slot;
    }
  }

  private holds(n: number, kind: number): boolean {
    const b = 4 * n;
    const bits = this.bits;
    return (
      this.kinds[n] === kind &&
      bits[b] === words[0] &&
      bits[b + 1] === words[1] &&
      bits[b + 2] === words[2] &&
      bits[b + 3] === words[3]
    );
  }

  private rehash(): void {
    const table = new Int32Array(2 * this.table.length).fill(EMPTY);
    const mask = table.length - 1;
    for (let n = 0; n < this.count; n++) {
      const kind = this.kinds[n]!;
      if (kind === OTHER) continue;
      words.set(this.bits.subarray(4 * n, 4 * n + 4));
      let slot = hashWords(kind) & mask;
      while (table[slot] !== EMPTY) slot = (slot + 1) & mask;
      table[slot] = n;
    }
    this.table = table;
  }
}
