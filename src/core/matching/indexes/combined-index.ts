import type { CandidateCollector, ProbeInfo } from './candidate-collector';
import type { NameIndex } from './name-index';
import { grown } from '../../typed-arrays';

// Read once: in a vm context (jest) a global read in a hot loop can stay a slow lookup for the rest of the
// process (blocking measured 4x slower there); a module constant costs nothing in plain node.
const { imul } = Math;

/** The key index's side: each record's keys (a lossless KeyIndex). */
export interface KeysOfRecords {
  readonly count: number;
  keysOf(r: number): readonly string[];
}

const NO_SCAN: ProbeInfo = { fullScan: false };
/** Looking up one (key, token) posting, in the unit of estimate(): a candidate visited and refined. */
const LOOKUP_COST = 0.25;
/** Vocabulary tokens one neighbour search scans per unit of estimate() (measured at 1M: ~0.5 us a token). */
const SCAN_PER_UNIT = 2;
/** Records a token needs for its neighbour list to be kept (each kept list costs a test per new token). */
const CACHE_MIN_RECORDS = 8;
const EMPTY = -1;

/**
 * Two mandatory attributes that must both pass, one a lossless key index (a surname's Double
 * Metaphone code, an exact value) and one the name matcher's token index: postings keyed by the
 * pair (key, name token), so an account visits only the records that share its key AND hold a
 * neighbour of one of its walked name tokens, instead of a whole key bucket. Lossless: a passing
 * candidate shares a key K with the account (the key index is lossless) and, for the value pair
 * that passes, holds a neighbour y of one of any na - need + 1 tokens of the account's value
 * (the name index's pigeonhole), so it is in posting (K, y); for an initial x its neighbours are
 * the tokens starting with x's letter, so records are also posted under (K, letter).
 *
 * Flat storage: an open-addressing table of (key id, token id or -1-letter) -> posting head and
 * size, and the postings as linked entries in typed arrays, newest first. Records are appended in
 * ascending order, so truncate(n) pops list heads and a probe skips the records >= limit at the
 * head of each list.
 */
export class CombinedIndex {
  readonly lossless = true;
  private readonly keyIds = new Map<string, number>();
  // table
  private mask = 0;
  private used = 0;
  private slotKey = new Int32Array(0);
  private slotTok = new Int32Array(0);
  private slotHead = new Int32Array(0);
  private slotSize = new Int32Array(0);
  // entries (postings), record order
  private entRec = new Int32Array(0);
  private entNext = new Int32Array(0);
  private entSlot = new Int32Array(0);
  private entLen = 0;
  /** Per record: its first entry. */
  private recStart = new Int32Array(0);
  private records = 0;
  /** Scratch per record: its key ids, its (token, letter) posting names. */
  private readonly ks: number[] = [];
  private readonly ts: number[] = [];
  /** The plan of the last estimate(): per value, the tokens to walk (-1-letter for an initial). */
  private planFor = -1;
  private plan: number[][] = [];
  private readonly costs: number[] = [];
  /**
   * Neighbour lists of the walked tokens held by CACHE_MIN_RECORDS or more records (a first name), kept exact as
   * the vocabulary grows: a new token is tested against each cached token (isNeighbour), which
   * costs the cache's size, not a vocabulary scan. The name index's own cache stays untouched, so
   * its per-new-token upkeep does not start in configurations that never probe it.
   */
  private readonly nbCache = new Map<number, number[]>();
  private vocabSeen = 0;

  constructor(
    private readonly keys: KeysOfRecords,
    private readonly names: NameIndex,
  ) {
    this.grow(1 << 12);
    this.append(Math.min(keys.count, names.count));
  }

  get count(): number {
    return this.records;
  }

  append(n: number): void {
    const { ks, ts, names } = this;
    for (let r = this.records; r < n; r++) {
      this.ensureRecords(r + 2);
      this.recStart[r] = this.entLen;
      ks.length = 0;
      for (const k of this.keys.keysOf(r)) {
        let id = this.keyIds.get(k);
        if (id === undefined) this.keyIds.set(k, (id = this.keyIds.size));
        ks.push(id);
      }
      ts.length = 0;
      for (const value of names.tokensOf(r)) {
        for (const x of value) {
          if (!ts.includes(x)) ts.push(x);
          const letter = -1 - names.firstCharOf(x);
          if (!ts.includes(letter)) ts.push(letter);
        }
      }
      for (const k of ks) for (const t of ts) this.post(k, t, r);
      this.records = r + 1;
    }
    this.recStart[this.records] = this.entLen;
    const vocab = names.vocabularySize;
    if (this.nbCache.size > 0) {
      for (let y = this.vocabSeen; y < vocab; y++)
        for (const [x, list] of this.nbCache) if (names.isNeighbour(x, y)) list.push(y);
    }
    this.vocabSeen = vocab;
  }

  private neighbours(x: number): readonly number[] {
    const cached = this.nbCache.get(x);
    if (cached) return cached;
    const found = this.names.searchNeighbours(x);
    if (this.names.recordsWith(x) >= CACHE_MIN_RECORDS) this.nbCache.set(x, found);
    return found;
  }

  truncate(n: number): void {
    if (n >= this.records) return;
    const stop = this.recStart[n]!;
    for (let e = this.entLen - 1; e >= stop; e--) {
      const s = this.entSlot[e]!;
      this.slotHead[s] = this.entNext[e]!;
      this.slotSize[s]!--;
    }
    this.entLen = stop;
    this.records = n;
    this.planFor = -1;
  }

  /**
   * Work of probing with record r: per name value, the na - need + 1 tokens whose (key, neighbour)
   * postings are shortest. A token not searched yet costs its neighbour search (a vocabulary scan,
   * shared by the records holding the token) plus its own postings, a lower bound of its
   * neighbours'. The plan is kept for probe().
   */
  estimate(r: number): number {
    return this.planWalk(r);
  }

  private planWalk(r: number): number {
    const { names, costs } = this;
    const ks = this.keyIdsOf(r);
    let work = 0;
    this.plan = [];
    this.planFor = r;
    if (ks.length === 0) return 0;
    for (const value of names.tokensOf(r)) {
      const need = names.minNeed(value.length);
      if (!Number.isFinite(need)) {
        this.plan.push([]);
        continue;
      }
      const walk = value.length - need + 1;
      costs.length = 0;
      for (const x of value) {
        let c = 0;
        if (names.isInitial(x)) {
          for (const k of ks) c += this.size(k, -1 - names.firstCharOf(x)) + LOOKUP_COST;
        } else {
          const nb = this.nbCache.get(x);
          if (nb) {
            for (const k of ks) for (const y of nb) c += this.size(k, y) + LOOKUP_COST;
          } else {
            // a kept list is searched once and shared by the records holding the token
            const f = names.recordsWith(x);
            c = names.vocabularySize / SCAN_PER_UNIT / (f >= CACHE_MIN_RECORDS ? f : 1);
            for (const k of ks) c += this.size(k, x) + LOOKUP_COST;
          }
        }
        costs.push(c);
      }
      const order = value.map((_, i) => i).sort((a, b) => costs[a]! - costs[b]! || a - b);
      const chosen: number[] = [];
      for (let p = 0; p < walk; p++) {
        const x = value[order[p]!]!;
        work += costs[order[p]!]!;
        chosen.push(names.isInitial(x) ? -1 - names.firstCharOf(x) : x);
      }
      this.plan.push(chosen);
    }
    return work;
  }

  /** Adds every record < limit sharing a key with r and holding a neighbour of a walked token. */
  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo {
    if (this.planFor !== r) this.planWalk(r);
    const ks = this.keyIdsOf(r);
    for (const walked of this.plan) {
      for (const x of walked) {
        if (x < 0) {
          for (const k of ks) this.walk(k, x, limit, out);
          continue;
        }
        const nb = this.neighbours(x);
        for (const k of ks) for (const y of nb) this.walk(k, y, limit, out);
      }
    }
    this.planFor = -1;
    return NO_SCAN;
  }

  private keyIdsOf(r: number): number[] {
    const out: number[] = [];
    for (const k of this.keys.keysOf(r)) {
      const id = this.keyIds.get(k);
      if (id !== undefined) out.push(id);
    }
    return out;
  }

  private walk(k: number, t: number, limit: number, out: CandidateCollector): void {
    const s = this.find(k, t);
    if (s < 0) return;
    const { entRec, entNext } = this;
    let e = this.slotHead[s]!;
    while (e !== EMPTY && entRec[e]! >= limit) e = entNext[e]!;
    for (; e !== EMPTY; e = entNext[e]!) out.add(entRec[e]!);
  }

  private size(k: number, t: number): number {
    const s = this.find(k, t);
    return s < 0 ? 0 : this.slotSize[s]!;
  }

  private find(k: number, t: number): number {
    const { slotKey, slotTok, mask } = this;
    for (let s = hash(k, t) & mask; ; s = (s + 1) & mask) {
      const sk = slotKey[s]!;
      if (sk === EMPTY) return -1;
      if (sk === k && slotTok[s] === t) return s;
    }
  }

  private post(k: number, t: number, r: number): void {
    let s = this.find(k, t);
    if (s < 0) {
      if (2 * (this.used + 1) > this.mask + 1) this.grow(2 * (this.mask + 1));
      for (s = hash(k, t) & this.mask; this.slotKey[s] !== EMPTY; s = (s + 1) & this.mask);
      this.slotKey[s] = k;
      this.slotTok[s] = t;
      this.slotHead[s] = EMPTY;
      this.used++;
    }
    if (this.entLen === this.entRec.length) {
      const cap = Math.max(1024, 2 * this.entLen);
      this.entRec = grown(this.entRec, cap);
      this.entNext = grown(this.entNext, cap);
      this.entSlot = grown(this.entSlot, cap);
    }
    const e = this.entLen++;
    this.entRec[e] = r;
    this.entNext[e] = this.slotHead[s]!;
    this.entSlot[e] = s;
    this.slotHead[s] = e;
    this.slotSize[s]!++;
  }

  /** Rehash into cap slots; entries keep their lists, their slot numbers follow. */
  private grow(cap: number): void {
    const { slotKey, slotTok, slotHead, slotSize } = this;
    this.mask = cap - 1;
    this.slotKey = new Int32Array(cap).fill(EMPTY);
    this.slotTok = new Int32Array(cap);
    this.slotHead = new Int32Array(cap).fill(EMPTY);
    this.slotSize = new Int32Array(cap);
    for (let o = 0; o < slotKey.length; o++) {
      const k = slotKey[o]!;
      if (k === EMPTY) continue;
      let s = hash(k, slotTok[o]!) & this.mask;
      while (this.slotKey[s] !== EMPTY) s = (s + 1) & this.mask;
      this.slotKey[s] = k;
      this.slotTok[s] = slotTok[o]!;
      this.slotHead[s] = slotHead[o]!;
      this.slotSize[s] = slotSize[o]!;
      for (let e = slotHead[o]!; e !== EMPTY; e = this.entNext[e]!) this.entSlot[e] = s;
    }
  }

  private ensureRecords(n: number): void {
    if (this.recStart.length < n) this.recStart = grown(this.recStart, Math.max(n, 2 * this.recStart.length, 1024));
  }
}

function hash(k: number, t: number): number {
  let h = imul(k, 0x9e3779b1) ^ imul(t, 0x85ebca77);
  h ^= h >>> 15;
  h = imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 13)) >>> 0;
}
