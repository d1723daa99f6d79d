import { jaroWinkler } from '../algorithms/jaro-winkler';
import { tokenSim } from '../algorithms/name-similarity';
import { grown } from '../../typed-arrays';

// Read once: in a vm context (jest) a global read in a hot loop can stay a slow lookup for the rest of the
// process (blocking measured 4x slower there); a module constant costs nothing in plain node.
const { imul, clz32 } = Math;

/**
 * The name tokens' vocabulary and, per token, its neighbours: the tokens with name-token
 * similarity > 0 (equal, initial-compatible, nickname group, metaphone code, or Jaro-Winkler
 * >= 0.8). The Jaro-Winkler neighbours are found by a scan of the vocabulary with the
 * shared-letter bound of minShared() for the pair's common prefix, then verified. The scan reads
 * typed columns only (letters, length, first four characters), no string. Neighbour lists are
 * cached, and kept complete as tokens are added.
 */
export class TokenNeighbours {
  private readonly vocab = new Map<string, number>();
  readonly tokens: string[] = [];
  private readonly tokenGroups: (readonly number[])[] = [];
  private readonly tokenCodes: string[] = [];
  /** Per token, three bit sets of letter buckets: occurring at least once, twice, three times. */
  private letters = new Int32Array(3 * 1024);
  /** Per token, its length (capped: a shorter length only loosens the bound). */
  private lengths = new Uint16Array(1024);
  /** Per token, its first four characters, one byte each (low byte of the code, 0 past the end). */
  private prefixes = new Int32Array(1024);
  /** Deduplication of candidates(): stamp[y] === epoch once y is in the current list. */
  private stamp = new Uint32Array(1024);
  private epoch = 0;
  private readonly byGroup = new Map<number, number[]>();
  private readonly byCode = new Map<string, number[]>();
  private readonly byFirst = new Map<string, number[]>();
  private readonly neighbourCache = new Map<number, number[]>();
  /** Tokens below this id are in every cached neighbour list they belong to. */
  private synced = 0;

  get size(): number {
    return this.tokens.length;
  }

  /** The token's id, adding it to the vocabulary when new. */
  add(tok: string, groups: readonly number[], code: string): number {
    let id = this.vocab.get(tok);
    if (id !== undefined) return id;
    id = this.tokens.length;
    this.vocab.set(tok, id);
    this.tokens.push(tok);
    this.tokenGroups.push(groups);
    this.tokenCodes.push(code);
    this.reserve(id + 1);
    setLetters(tok, this.letters, 3 * id);
    this.lengths[id] = Math.min(tok.length, 0xffff);
    this.prefixes[id] = packPrefix(tok);
    for (const g of groups) push(this.byGroup, g, id);
    if (code.length > 0) push(this.byCode, code, id);
    push(this.byFirst, tok.charAt(0), id);
    return id;
  }

  private reserve(n: number): void {
    if (n <= this.lengths.length) return;
    const cap = Math.max(n, this.lengths.length * 2);
    this.letters = grown(this.letters, 3 * cap);
    this.lengths = grown(this.lengths, cap);
    this.prefixes = grown(this.prefixes, cap);
    this.stamp = grown(this.stamp, cap);
  }

  /** The cached neighbour list of x, if searched already (no search). */
  cached(x: number): readonly number[] | undefined {
    this.sync();
    return this.neighbourCache.get(x);
  }

  /**
   * New vocabulary tokens: every cached neighbour list they belong to gets them. The candidate
   * relation of candidates() is symmetric (equal, initial and first letter, nickname group,
   * metaphone code, the symmetric JW filter), so the cached tokens that can have y as a
   * neighbour are among y's own candidates.
   */
  private sync(): void {
    if (this.synced === this.tokens.length) return;
    const firstNew = this.synced;
    this.synced = this.tokens.length;
    if (this.neighbourCache.size === 0) return;
    for (let y = firstNew; y < this.tokens.length; y++) {
      for (const x of this.candidates(y)) {
        if (x === y) continue;
        const cached = this.neighbourCache.get(x);
        if (cached && this.sim(x, y) > 0) cached.push(y);
      }
    }
  }

  private sim(x: number, y: number): number {
    return tokenSim(
      this.tokens[x]!,
      this.tokenGroups[x]!,
      this.tokenCodes[x]!,
      this.tokens[y]!,
      this.tokenGroups[y]!,
      this.tokenCodes[y]!,
    );
  }

  /** A superset of the tokens with similarity > 0 to token x, each once. */
  private candidates(x: number): number[] {
    const tok = this.tokens[x]!;
    if (tok.length === 1) return this.byFirst.get(tok) ?? [];
    if (++this.epoch === 0xffffffff) {
      this.stamp.fill(0);
      this.epoch = 1;
    }
    const epoch = this.epoch;
    const stamp = this.stamp;
    const out: number[] = [];
    const add = (y: number): void => {
      if (stamp[y] === epoch) return;
      stamp[y] = epoch;
      out.push(y);
    };
    add(x);
    const initial = this.vocab.get(tok.charAt(0));
    if (initial !== undefined) add(initial);
    for (const g of this.tokenGroups[x]!) for (const y of this.byGroup.get(g) ?? []) add(y);
    for (const y of this.byCode.get(this.tokenCodes[x]!) ?? []) add(y);
    // Jaro-Winkler >= 0.8: the letter-count bound of isNeighbour(), over the whole vocabulary. A
    // scan of typed columns: faster than a character prefix filter, whose postings (26 letters)
    // hold a large share of the vocabulary each. The bound per (common prefix, length) is a table.
    const L = this.letters;
    const lengths = this.lengths;
    const prefixes = this.prefixes;
    const a = this.lengths[x]!;
    const bound = minSharedTable(a);
    const x0 = L[3 * x]!;
    const x1 = L[3 * x + 1]!;
    const x2 = L[3 * x + 2]!;
    const px = prefixes[x]!;
    const n = this.tokens.length;
    for (let y = 0; y < n; y++) {
      const b = lengths[y]!;
      if (b < 2) continue;
      if ((x2 & L[3 * y + 2]!) === 0) {
        const shared = popcount(x0 & L[3 * y]!) + popcount(x1 & L[3 * y + 1]!);
        const l = clz32(px ^ prefixes[y]!) >>> 3;
        if (shared < bound[(b < MAX_BOUND_LENGTH ? b : MAX_BOUND_LENGTH) * 5 + l]!) continue;
      }
      add(y);
    }
    return out;
  }

  /** Token ids with similarity > 0 to token x (including x). */
  neighbours(x: number): readonly number[] {
    this.sync();
    let nb = this.neighbourCache.get(x);
    if (nb) return nb;
    nb = this.search(x);
    this.neighbourCache.set(x, nb);
    return nb;
  }

  /** neighbours(x) as a new list, not cached (a caller that keeps lists of its own). */
  searchNeighbours(x: number): number[] {
    const cached = this.cached(x);
    return cached ? cached.slice() : this.search(x);
  }

  private search(x: number): number[] {
    const found: number[] = [];
    if (this.tokens[x]!.length === 1) {
      for (const y of this.candidates(x)) found.push(y);
    } else {
      for (const y of this.candidates(x)) if (this.sim(x, y) > 0) found.push(y);
    }
    return found;
  }

  /**
   * sim(x, y) > 0, computing Jaro-Winkler only when the cheap cases leave it open (minShared: a
   * bound on the shared characters, which the letter-bucket sets bound from above: merged
   * buckets only raise it; a bucket seen three times on both sides skips the bound).
   */
  isNeighbour(x: number, y: number): boolean {
    if (x === y) return true;
    const tx = this.tokens[x]!;
    const ty = this.tokens[y]!;
    const a = tx.length;
    const b = ty.length;
    if (a === 1 || b === 1) return tx.charCodeAt(0) === ty.charCodeAt(0);
    const cx = this.tokenCodes[x]!;
    if (cx.length > 0 && cx === this.tokenCodes[y]) return true;
    const gx = this.tokenGroups[x]!;
    if (gx.length > 0) {
      const gy = this.tokenGroups[y]!;
      for (let i = 0; i < gx.length; i++) if (gy.includes(gx[i]!)) return true;
    }
    const L = this.letters;
    const lx = 3 * x;
    const ly = 3 * y;
    if ((L[lx + 2]! & L[ly + 2]!) === 0) {
      const shared = popcount(L[lx]! & L[ly]!) + popcount(L[lx + 1]! & L[ly + 1]!);
      const l = clz32(this.prefixes[x]! ^ this.prefixes[y]!) >>> 3;
      if (shared < minShared(a, b, l)) return false;
    }
    return jaroWinkler(tx, ty) >= 0.8;
  }
}

/**
 * Jaro needed for Jaro-Winkler >= 0.8 with a common prefix of l characters (0-4): Winkler adds
 * 0.1 l (1 - Jaro), and only from Jaro >= 0.7. So 0.8 (l = 0), 7/9, 0.75, 5/7, then 0.7.
 */
const JARO_FOR_PREFIX = [0, 1, 2, 3, 4].map((l) => Math.max(l === 0 ? 0.8 : 0.7, (0.8 - 0.1 * l) / (1 - 0.1 * l)));

/**
 * Fewest shared characters (multiset) two tokens of lengths a and b with a common prefix of l
 * characters need for Jaro-Winkler >= 0.8. Jaro <= (m/a + m/b + 1)/3 with m matched characters,
 * and m <= shared characters: m >= (3 Jaro - 1) ab/(a+b). Loosened against float noise. A prefix
 * taken too long (characters equal in their low byte only) only loosens it.
 */
function minShared(a: number, b: number, l: number): number {
  return Math.ceil(((3 * JARO_FOR_PREFIX[l]! - 1) * a * b) / (a + b) - 1e-6);
}

/** Lengths from which the bound table holds one entry (the bound at this length: looser, still a bound). */
const MAX_BOUND_LENGTH = 48;
const boundTables = new Map<number, Uint8Array>();

/**
 * minShared(a, b, l) at [b * 5 + l] for b up to MAX_BOUND_LENGTH. For longer b the entry of
 * MAX_BOUND_LENGTH stands in: the bound grows with b, so a smaller one keeps the filter lossless.
 */
function minSharedTable(a: number): Uint8Array {
  let table = boundTables.get(a);
  if (table) return table;
  table = new Uint8Array((MAX_BOUND_LENGTH + 1) * 5);
  for (let b = 1; b <= MAX_BOUND_LENGTH; b++) {
    for (let l = 0; l < 5; l++) table[b * 5 + l] = Math.min(255, minShared(a, b, l));
  }
  boundTables.set(a, table);
  return table;
}

/** Letters a-z are buckets 0-25, any other character one of buckets 26-31. */
function setLetters(tok: string, out: Int32Array, at: number): void {
  let once = 0;
  let twice = 0;
  let thrice = 0;
  for (let i = 0; i < tok.length; i++) {
    const c = tok.charCodeAt(i);
    const bit = 1 << (c >= 97 && c <= 122 ? c - 97 : 26 + (c % 6));
    if ((twice & bit) !== 0) thrice |= bit;
    else if ((once & bit) !== 0) twice |= bit;
    else once |= bit;
  }
  out[at] = once;
  out[at + 1] = twice;
  out[at + 2] = thrice;
}

/** The first four characters, a byte each: clz32 of two tokens' XOR / 8 is their common prefix (or longer). */
function packPrefix(tok: string): number {
  let p = 0;
  for (let i = 0; i < 4; i++) p = (p << 8) | (i < tok.length ? tok.charCodeAt(i) & 0xff : 0);
  return p;
}

/** Set bits of a 32-bit integer, branch-free (the scan calls it twice per vocabulary token). */
export function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  v = (v + (v >>> 4)) & 0x0f0f0f0f;
  return imul(v, 0x01010101) >>> 24;
}

function push<K>(map: Map<K, number[]>, key: K, id: number): void {
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
}
