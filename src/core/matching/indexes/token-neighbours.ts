import { jaroWinkler } from '../algorithms/jaro-winkler';
import { tokenSim } from '../algorithms/name-similarity';

/**
 * The name tokens' vocabulary and, per token, its neighbours: the tokens with name-token
 * similarity > 0 (equal, initial-compatible, nickname group, metaphone code, or Jaro-Winkler
 * >= 0.8). The Jaro-Winkler neighbours are found by a scan of the vocabulary with the
 * shared-letter bound of minShared(), then verified. Neighbour lists are cached, and kept
 * complete as tokens are added.
 */
export class TokenNeighbours {
  private readonly vocab = new Map<string, number>();
  readonly tokens: string[] = [];
  private readonly tokenGroups: (readonly number[])[] = [];
  private readonly tokenCodes: string[] = [];
  /** Per token, three bit sets of letter buckets: occurring at least once, twice, three times. */
  private readonly letters: number[] = [];
  private readonly firstChar: number[] = [];
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
    pushLetters(tok, this.letters);
    this.firstChar.push(tok.charCodeAt(0));
    this.tokenCodes.push(code);
    for (const g of groups) push(this.byGroup, g, id);
    if (code.length > 0) push(this.byCode, code, id);
    push(this.byFirst, tok.charAt(0), id);
    return id;
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

  /** A superset of the tokens with similarity > 0 to token x. */
  private candidates(x: number): Iterable<number> {
    const tok = this.tokens[x]!;
    if (tok.length === 1) return this.byFirst.get(tok) ?? [];
    const candidates = new Set<number>([x]);
    const initial = this.vocab.get(tok.charAt(0));
    if (initial !== undefined) candidates.add(initial);
    for (const g of this.tokenGroups[x]!) for (const y of this.byGroup.get(g) ?? []) candidates.add(y);
    for (const y of this.byCode.get(this.tokenCodes[x]!) ?? []) candidates.add(y);
    // Jaro-Winkler >= 0.8: the letter-count bound of isNeighbour(), over the whole vocabulary. A
    // scan of three small integers per token: faster than a character prefix filter, whose
    // postings (26 letters) hold a large share of the vocabulary each.
    const L = this.letters;
    const a = tok.length;
    const x0 = L[3 * x]!;
    const x1 = L[3 * x + 1]!;
    const x2 = L[3 * x + 2]!;
    const tokens = this.tokens;
    const first = this.firstChar;
    const fx = first[x]!;
    for (let y = 0; y < tokens.length; y++) {
      const b = tokens[y]!.length;
      if (b < 2) continue;
      if ((x2 & L[3 * y + 2]!) === 0) {
        const shared = popcount(x0 & L[3 * y]!) + popcount(x1 & L[3 * y + 1]!);
        if (shared < minShared(a, b, fx === first[y])) continue;
      }
      candidates.add(y);
    }
    return candidates;
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
      if (shared < minShared(a, b, this.firstChar[x] === this.firstChar[y])) return false;
    }
    return jaroWinkler(tx, ty) >= 0.8;
  }
}

/**
 * Fewest shared characters (multiset) two tokens of lengths a and b need for Jaro-Winkler >= 0.8.
 * Jaro <= (m/a + m/b + 1)/3 with m matched characters, and m <= shared characters. Without a
 * common first character there is no prefix boost, so Jaro >= 0.8: m >= 1.4ab/(a+b); with one,
 * the boost applies only from Jaro >= 0.7: m >= 1.1ab/(a+b). Loosened by 1e-9 against float noise.
 */
function minShared(a: number, b: number, sameFirst: boolean): number {
  return Math.ceil(((sameFirst ? 1.1 : 1.4) * a * b) / (a + b) - 1e-6);
}

/** Letters a-z are buckets 0-25, any other character one of buckets 26-31. */
function pushLetters(tok: string, out: number[]): void {
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
  out.push(once, twice, thrice);
}

export function popcount(x: number): number {
  let n = 0;
  for (let v = x; v !== 0; v &= v - 1) n++;
  return n;
}

function push<K>(map: Map<K, number[]>, key: K, id: number): void {
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
}
