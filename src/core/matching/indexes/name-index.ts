import { minRaw } from '../algorithms/kernel';
import { MAX_NAME_TOKENS, type NameValue } from '../algorithms/name-similarity';
import type { CandidateCollector, CandidateIndex, ProbeInfo } from './candidate-collector';
import { grown } from '../../typed-arrays';
import { TokenNeighbours, popcount } from './token-neighbours';

const NO_SCAN: ProbeInfo = { fullScan: false };
const EPS = 1e-9;
/** Checking one found candidate's tokens against a stamped neighbour set, in postings walked. */
const VERIFY_COST = 4;

/**
 * Lossless candidate index for the name matcher, at token level.
 *
 * A pair scores 2*S/(na+nb) where S sums at most min(na, nb) one-to-one token similarities, each
 * <= 1 and counted only when > 0. Passing needs S >= t(na+nb)/2, so at least
 * need = ceil(t(na+nb)/2) query tokens have a "neighbour" (similarity > 0) among the candidate's
 * tokens. Walking the neighbours of any na - need + 1 query tokens (the rarest ones) therefore
 * reaches every passing candidate (pigeonhole). Neighbours of a token are exact: equal,
 * initial-compatible, nickname group, metaphone code, or Jaro-Winkler >= 0.8 (token-neighbours.ts).
 */
export class NameIndex implements CandidateIndex {
  readonly lossless = true;
  private readonly t: number;
  /** The token vocabulary and each token's neighbours. */
  private readonly vocab = new TokenNeighbours();
  private readonly tokenRecords: number[][] = [];
  /** Per record, per value: its token ids. */
  private readonly recordTokens: number[][][] = [];
  private readonly firstLetterRecords = new Map<string, number>();
  /** Per record, for the count filter of probe(). */
  private hitStamp = new Int32Array(0);
  private posStamp = new Int32Array(0);
  private hitCount = new Int32Array(0);
  private hitCur = 0;
  private posCur = 0;
  private readonly hitList: number[] = [];
  /** refine(): per vocabulary token [call stamp, which query tokens it neighbours]; per record, accepted. */
  private memo = new Int32Array(0);
  private memoCur = 0;
  private passStamp = new Int32Array(0);
  /** need per (query tokens, candidate tokens): ceil(t(na+nb)/2) (at least 1), -1 when above min(na, nb). */
  private readonly pairNeed: Int8Array;
  /** Per record, its token ids packed (packRecord). */
  private packed = new Int32Array(0);
  private packedStart = new Int32Array(0);
  private packedLen = 0;
  private refineCur = 0;
  /** Per vocabulary token, for countByTokens(). */
  private tokenStamp = new Int32Array(0);
  private tokenCur = 0;

  constructor(
    private readonly values: readonly (readonly NameValue[])[],
    threshold: number,
  ) {
    this.t = minRaw(threshold);
    this.pairNeed = new Int8Array((MAX_NAME_TOKENS + 1) ** 2).fill(-1);
    for (let na = 1; na <= MAX_NAME_TOKENS; na++) {
      for (let nb = 1; nb <= MAX_NAME_TOKENS; nb++) {
        const need = Math.max(1, Math.ceil((this.t * (na + nb)) / 2 - EPS));
        if (need <= Math.min(na, nb)) this.pairNeed[na * (MAX_NAME_TOKENS + 1) + nb] = need;
      }
    }
    this.append(values.length);
  }

  get count(): number {
    return this.recordTokens.length;
  }

  append(n: number): void {
    const tokens = this.vocab.tokens;
    for (let r = this.recordTokens.length; r < n; r++) {
      this.recordTokens.push(
        this.values[r]!.map((v) =>
          v.tokens.map((tok, i) => {
            const id = this.vocab.add(tok, v.groups[i]!, v.codes[i]!);
            if (id === this.tokenRecords.length) this.tokenRecords.push([]);
            const list = this.tokenRecords[id]!;
            if (list[list.length - 1] !== r) {
              list.push(r);
              const first = tokens[id]!.charAt(0);
              this.firstLetterRecords.set(first, (this.firstLetterRecords.get(first) ?? 0) + 1);
            }
            return id;
          }),
        ),
      );
      this.packRecord(r);
    }
  }

  /**
   * The record's values as [value count, then per value its token count and token ids], in one
   * typed array: refine() reads a few hundred records per account at random, and nested arrays
   * would cost a cache miss per level.
   */
  private packRecord(r: number): void {
    const vals = this.recordTokens[r]!;
    let size = 1;
    for (const ids of vals) size += 1 + ids.length;
    if (this.packed.length < this.packedLen + size) {
      const grown = new Int32Array(Math.max(this.packedLen + size, this.packed.length * 2, 1024));
      grown.set(this.packed.subarray(0, this.packedLen));
      this.packed = grown;
    }
    if (this.packedStart.length < r + 2) {
      const grown = new Int32Array(Math.max(r + 2, this.packedStart.length * 2, 1024));
      grown.set(this.packedStart);
      this.packedStart = grown;
    }
    let o = this.packedLen;
    this.packedStart[r] = o;
    this.packed[o++] = vals.length;
    for (const ids of vals) {
      this.packed[o++] = ids.length;
      for (const id of ids) this.packed[o++] = id;
    }
    this.packedLen = o;
  }

  /** Tokens forget nothing on truncate: a token without records adds no candidate. */
  truncate(n: number): void {
    for (let r = this.recordTokens.length - 1; r >= n; r--) {
      for (const ids of this.recordTokens[r]!) {
        for (const id of ids) {
          const list = this.tokenRecords[id]!;
          if (list[list.length - 1] !== r) continue;
          list.pop();
          const first = this.vocab.tokens[id]!.charAt(0);
          this.firstLetterRecords.set(first, this.firstLetterRecords.get(first)! - 1);
        }
      }
    }
    if (this.recordTokens.length > n) {
      this.packedLen = this.packedStart[n]!;
      this.recordTokens.length = n;
    }
  }

  /** neighbours(x) without caching it: the combined index keeps its own lists (see combined-index.ts). */
  searchNeighbours(x: number): number[] {
    return this.vocab.searchNeighbours(x);
  }

  /** Record r's token ids, per value (for the combined key and name index). */
  tokensOf(r: number): readonly (readonly number[])[] {
    return this.recordTokens[r]!;
  }

  /** First character (UTF-16 code) of token x; a one-character token is an initial. */
  firstCharOf(x: number): number {
    return this.vocab.tokens[x]!.charCodeAt(0);
  }

  isInitial(x: number): boolean {
    return this.vocab.tokens[x]!.length === 1;
  }

  /** Records holding token x (at least 1). */
  recordsWith(x: number): number {
    return Math.max(1, this.tokenRecords[x]!.length);
  }

  /** Tokens in the vocabulary: what one neighbour search scans. */
  get vocabularySize(): number {
    return this.vocab.size;
  }

  /** Fewest tokens of a value of na tokens with a neighbour in any passing partner (Infinity: none can pass). */
  minNeed(na: number): number {
    return this.need(na);
  }

  /** Records holding the token; for an initial, records holding any token with that first letter. */
  private proxy(x: number): number {
    const tok = this.vocab.tokens[x]!;
    return tok.length === 1 ? (this.firstLetterRecords.get(tok) ?? 0) : this.tokenRecords[x]!.length;
  }

  /** Fewest query tokens that must have a neighbour in a passing partner (any size); Infinity: none can pass. */
  private need(na: number): number {
    let need = Number.POSITIVE_INFINITY;
    for (let nb = 1; nb <= MAX_NAME_TOKENS; nb++) {
      const k = Math.ceil((this.t * (na + nb)) / 2 - EPS);
      if (k <= Math.min(na, nb) && k < need) need = k;
    }
    return need < 1 ? 1 : need;
  }

  /** Query tokens rarest first (by own frequency, which needs no neighbour search). */
  private rarestFirst(ids: number[]): number[] {
    return ids
      .map((id) => [id, this.proxy(id)] as const)
      .sort((a, b) => a[1] - b[1] || a[0] - b[0])
      .map((p) => p[0]);
  }

  /** Query tokens to walk: the cheapest na - need + 1 (any such set reaches every passing partner), or none. */
  private walked(ids: number[]): number[] {
    const need = this.need(ids.length);
    if (!Number.isFinite(need)) return [];
    return this.rarestFirst(ids).slice(0, ids.length - need + 1);
  }

  /**
   * Rough: neighbours are not searched for an estimate (that is the expensive part), so the own
   * frequency of the walked tokens is scaled by a typical neighbourhood size.
   */
  estimate(r: number): number {
    let work = 0;
    for (const ids of this.recordTokens[r]!) {
      for (const x of this.walked(ids)) {
        const nb = this.vocab.cached(x);
        if (nb) for (const y of nb) work += this.tokenRecords[y]!.length;
        // not searched yet: the search itself walks a share of the vocabulary
        else work += this.proxy(x) * 8 + (this.vocab.tokens[x]!.length > 1 ? this.vocab.size >> 2 : 0);
      }
    }
    return work;
  }

  /**
   * Candidates come from the walked tokens (pigeonhole). When a partner needs two or more query
   * tokens with a neighbour, the other query tokens' neighbours are walked too and a candidate is
   * kept only if at least `need` query tokens reach it: each query token adds at most 1 to the
   * one-to-one sum, and only through a neighbour, so no passing pair is dropped. Walking postings
   * costs nanoseconds; scoring a pair costs about a microsecond.
   */
  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo {
    for (const ids of this.recordTokens[r]!) {
      const need = this.need(ids.length);
      if (!Number.isFinite(need)) continue;
      const order = this.rarestFirst(ids);
      const walk = ids.length - need + 1;
      if (need <= 1) {
        for (let p = 0; p < walk; p++) this.walk(order[p]!, limit, (c) => out.add(c));
        continue;
      }
      this.ensureHits();
      const cur = ++this.hitCur;
      const found = this.hitList;
      found.length = 0;
      for (let p = 0; p < order.length; p++) {
        const pos = ++this.posCur;
        const first = p < walk;
        // A token that only counts (it cannot add candidates) is checked against the candidates
        // found so far when that is cheaper than walking its postings: a common token's postings
        // grow with the baseline, the candidates of an account do not. Same counts either way.
        if (!first && found.length * VERIFY_COST < this.postings(order[p]!)) {
          this.countByTokens(order[p]!, found, cur, pos);
          continue;
        }
        this.walk(order[p]!, limit, (c) => {
          if (this.hitStamp[c] !== cur) {
            if (!first) return; // not reached by the walked tokens: cannot pass
            this.hitStamp[c] = cur;
            this.hitCount[c] = 0;
            found.push(c);
          }
          if (this.posStamp[c] !== pos) {
            this.posStamp[c] = pos;
            this.hitCount[c]!++;
          }
        });
      }
      for (const c of found) if (this.hitCount[c]! >= need) out.add(c);
    }
    return NO_SCAN;
  }

  /**
   * Keeps a candidate only when, for some pair of values, at least ceil(t(na+nb)/2) of the query
   * value's tokens have a neighbour among the candidate value's tokens: the one-to-one sum S
   * counts each query token at most once, at most 1, and only through a neighbour, and a pass
   * needs S >= t(na+nb)/2. Each candidate token's neighbour mask (which query tokens it is a
   * neighbour of) is computed once per call, so no neighbour search over the vocabulary is needed.
   */
  refine(r: number, out: CandidateCollector): void {
    if (this.memo.length < 2 * this.vocab.size) this.memo = new Int32Array(Math.max(4 * this.vocab.size, 2048));
    const queries = this.recordTokens[r]!;
    if (queries.length === 1) {
      const q = queries[0]!;
      this.memoCur++;
      out.retain((c) => this.admits(q, c));
      return;
    }
    const n = this.recordTokens.length;
    if (this.passStamp.length < n) this.passStamp = new Int32Array(Math.max(n, this.passStamp.length * 2, 1024));
    const passed = this.passStamp;
    const pass = ++this.refineCur;
    for (const q of queries) {
      this.memoCur++;
      for (let k = 0; k < out.size; k++) {
        const c = out.list[k]!;
        if (passed[c] !== pass && this.admits(q, c)) passed[c] = pass;
      }
    }
    out.retain((c) => passed[c] === pass);
  }

  /** Some value of record c has enough tokens that neighbour query value q's (memo of this call). */
  private admits(q: readonly number[], c: number): boolean {
    const { memo, packed, pairNeed } = this;
    const cur = this.memoCur;
    const row = q.length * (MAX_NAME_TOKENS + 1);
    let o = this.packedStart[c]!;
    for (let vi = packed[o++]!; vi > 0; vi--) {
      const nb = packed[o++]!;
      const end = o + nb;
      const need = pairNeed[row + nb]!;
      if (need < 0) {
        o = end;
        continue;
      }
      let m = 0;
      for (; o < end; o++) {
        const y2 = 2 * packed[o]!;
        if (memo[y2] !== cur) {
          memo[y2] = cur;
          memo[y2 + 1] = this.neighbourMask(q, y2 >> 1);
        }
        m |= memo[y2 + 1]!;
      }
      if (popcount(m) >= need) return true;
    }
    return false;
  }

  /** Bit k set when query token q[k] and token y are neighbours (similarity > 0). */
  private neighbourMask(q: readonly number[], y: number): number {
    let m = 0;
    for (let k = 0; k < q.length; k++) if (this.vocab.isNeighbour(q[k]!, y)) m |= 1 << k;
    return m;
  }

  /** Name-token similarity > 0 (token-neighbours.ts). */
  isNeighbour(x: number, y: number): boolean {
    return this.vocab.isNeighbour(x, y);
  }

  /** Upper bound of the records walk(x) visits. */
  private postings(x: number): number {
    let n = 0;
    for (const y of this.vocab.neighbours(x)) n += this.tokenRecords[y]!.length;
    return n;
  }

  /** For each found candidate holding a neighbour of x (what walk(x) would reach), one more hit. */
  private countByTokens(x: number, found: readonly number[], cur: number, pos: number): void {
    const nb = this.vocab.neighbours(x);
    if (this.tokenStamp.length < this.vocab.size)
      this.tokenStamp = new Int32Array(Math.max(this.vocab.size, this.tokenStamp.length * 2, 1024));
    const stamp = ++this.tokenCur;
    for (const y of nb) this.tokenStamp[y] = stamp;
    for (const c of found) {
      if (this.hitStamp[c] !== cur || this.posStamp[c] === pos) continue;
      if (!this.holdsStamped(c, stamp)) continue;
      this.posStamp[c] = pos;
      this.hitCount[c]!++;
    }
  }

  private holdsStamped(c: number, stamp: number): boolean {
    for (const ids of this.recordTokens[c]!) for (const id of ids) if (this.tokenStamp[id] === stamp) return true;
    return false;
  }

  private walk(x: number, limit: number, visit: (c: number) => void): void {
    for (const y of this.vocab.neighbours(x)) {
      const recs = this.tokenRecords[y]!;
      for (let i = 0; i < recs.length; i++) {
        const c = recs[i]!;
        if (c >= limit) break;
        visit(c);
      }
    }
  }

  private ensureHits(): void {
    const n = this.recordTokens.length;
    if (this.hitStamp.length >= n) return;
    const cap = Math.max(n, this.hitStamp.length * 2, 1024);
    this.hitStamp = grown(this.hitStamp, cap);
    this.posStamp = grown(this.posStamp, cap);
    this.hitCount = new Int32Array(cap);
  }
}
