import { jaroWinklerOverlapFilter } from '../algorithms/jaro-winkler';
import { minRaw } from '../algorithms/kernel';
import { MAX_NAME_TOKENS, type NameValue, tokenSim } from '../algorithms/name-matcher';
import { CandidateCollector, type CandidateIndex, type ProbeInfo } from './candidate-collector';
import { OverlapIndex } from './overlap-index';

const NO_SCAN: ProbeInfo = { fullScan: false };
const EPS = 1e-9;

/**
 * Lossless candidate index for the name matcher, at token level.
 *
 * A pair scores 2*S/(na+nb) where S sums at most min(na, nb) one-to-one token similarities, each
 * <= 1 and counted only when > 0. Passing needs S >= t(na+nb)/2, so at least
 * need = ceil(t(na+nb)/2) query tokens have a "neighbour" (similarity > 0) among the candidate's
 * tokens. Walking the neighbours of any na - need + 1 query tokens (the rarest ones) therefore
 * reaches every passing candidate (pigeonhole). Neighbours of a token are exact: equal,
 * initial-compatible, nickname group, metaphone code, or Jaro-Winkler >= 0.8 (found with the
 * lossless JW character filter over the token vocabulary, then verified).
 */
export class NameIndex implements CandidateIndex {
  readonly lossless = true;
  private readonly t: number;
  private readonly vocab = new Map<string, number>();
  private readonly tokens: string[] = [];
  private readonly tokenGroups: (readonly number[])[] = [];
  private readonly tokenCodes: string[] = [];
  private readonly tokenRecords: number[][] = [];
  /** Per record, per value: its token ids. */
  private readonly recordTokens: number[][][];
  private readonly byGroup = new Map<number, number[]>();
  private readonly byCode = new Map<string, number[]>();
  private readonly byFirst = new Map<string, number[]>();
  private readonly neighbourCache = new Map<number, Int32Array>();
  private readonly firstLetterRecords = new Map<string, number>();
  private jwIndex: OverlapIndex<string> | undefined;
  private jwCollector: CandidateCollector | undefined;

  constructor(values: readonly (readonly NameValue[])[], threshold: number) {
    this.t = minRaw(threshold);
    this.recordTokens = new Array<number[][]>(values.length);
    for (let r = 0; r < values.length; r++) {
      this.recordTokens[r] = values[r]!.map((v) =>
        v.tokens.map((tok, i) => {
          let id = this.vocab.get(tok);
          if (id === undefined) {
            id = this.tokens.length;
            this.vocab.set(tok, id);
            this.tokens.push(tok);
            this.tokenGroups.push(v.groups[i]!);
            this.tokenCodes.push(v.codes[i]!);
            this.tokenRecords.push([]);
            for (const g of v.groups[i]!) push(this.byGroup, g, id);
            if (v.codes[i]!.length > 0) push(this.byCode, v.codes[i]!, id);
            push(this.byFirst, tok.charAt(0), id);
          }
          const list = this.tokenRecords[id]!;
          if (list[list.length - 1] !== r) {
            list.push(r);
            const first = tok.charAt(0);
            this.firstLetterRecords.set(first, (this.firstLetterRecords.get(first) ?? 0) + 1);
          }
          return id;
        }),
      );
    }
  }

  /** Token ids with similarity > 0 to token x (including x). */
  private neighbours(x: number): Int32Array {
    let nb = this.neighbourCache.get(x);
    if (nb) return nb;
    const tok = this.tokens[x]!;
    const found = new Set<number>();
    if (tok.length === 1) {
      for (const y of this.byFirst.get(tok) ?? []) found.add(y);
    } else {
      const candidates = new Set<number>([x]);
      const initial = this.vocab.get(tok.charAt(0));
      if (initial !== undefined) candidates.add(initial);
      for (const g of this.tokenGroups[x]!) for (const y of this.byGroup.get(g) ?? []) candidates.add(y);
      for (const y of this.byCode.get(this.tokenCodes[x]!) ?? []) candidates.add(y);
      const jw = this.jaroWinklerIndex();
      const out = this.jwCollector!;
      out.begin();
      jw.probe(x, this.tokens.length, out);
      for (let k = 0; k < out.size; k++) candidates.add(out.list[k]!);
      for (const y of candidates) {
        if (tokenSim(tok, this.tokenGroups[x]!, this.tokenCodes[x]!, this.tokens[y]!, this.tokenGroups[y]!, this.tokenCodes[y]!) > 0) found.add(y);
      }
    }
    nb = Int32Array.from(found);
    this.neighbourCache.set(x, nb);
    return nb;
  }

  /** JW >= 0.8 between vocabulary tokens of two or more characters. */
  private jaroWinklerIndex(): OverlapIndex<string> {
    if (!this.jwIndex) {
      this.jwIndex = new OverlapIndex(
        jaroWinklerOverlapFilter(80.05), // minRaw(80.05) = 0.8 - 1e-9
        this.tokens.map((tok) => (tok.length > 1 ? [tok] : [])),
      );
      this.jwCollector = new CandidateCollector(this.tokens.length);
    }
    return this.jwIndex;
  }

  /** Records holding the token; for an initial, records holding any token with that first letter. */
  private proxy(x: number): number {
    const tok = this.tokens[x]!;
    return tok.length === 1 ? (this.firstLetterRecords.get(tok) ?? 0) : this.tokenRecords[x]!.length;
  }

  /** Query tokens to walk: the cheapest na - need + 1, or none when no partner size can pass. */
  private walked(ids: number[]): number[] {
    const na = ids.length;
    let need = Number.POSITIVE_INFINITY;
    for (let nb = 1; nb <= MAX_NAME_TOKENS; nb++) {
      const k = Math.ceil((this.t * (na + nb)) / 2 - EPS);
      if (k <= Math.min(na, nb) && k < need) need = k;
    }
    if (!Number.isFinite(need)) return [];
    if (need < 1) need = 1;
    // Any na - need + 1 tokens will do; the rarest (by own frequency, which needs no neighbour
    // search) usually have the fewest neighbours' records.
    return ids
      .map((id) => [id, this.proxy(id)] as const)
      .sort((a, b) => a[1] - b[1] || a[0] - b[0])
      .slice(0, na - need + 1)
      .map((p) => p[0]);
  }

  /**
   * Rough: neighbours are not searched for an estimate (that is the expensive part), so the own
   * frequency of the walked tokens is scaled by a typical neighbourhood size.
   */
  estimate(r: number): number {
    let work = 0;
    for (const ids of this.recordTokens[r]!) {
      for (const x of this.walked(ids)) {
        const nb = this.neighbourCache.get(x);
        if (nb) for (const y of nb) work += this.tokenRecords[y]!.length;
        // not searched yet: the search itself walks a share of the vocabulary
        else work += this.proxy(x) * 8 + (this.tokens[x]!.length > 1 ? this.tokens.length >> 2 : 0);
      }
    }
    return work;
  }

  probe(r: number, limit: number, out: CandidateCollector): ProbeInfo {
    for (const ids of this.recordTokens[r]!) {
      for (const x of this.walked(ids)) {
        for (const y of this.neighbours(x)) {
          const recs = this.tokenRecords[y]!;
          for (let i = 0; i < recs.length; i++) {
            const c = recs[i]!;
            if (c >= limit) break;
            out.add(c);
          }
        }
      }
    }
    return NO_SCAN;
  }
}

function push<K>(map: Map<K, number[]>, key: K, id: number): void {
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
}
