import { doubleMetaphone } from '../../src/core/matching/algorithms/double-metaphone';
import { tokenSim } from '../../src/core/matching/algorithms/name-similarity';
import { TokenNeighbours, popcount } from '../../src/core/matching/indexes/token-neighbours';
import { nicknameGroups } from '../../src/core/matching/nicknames';
import { generate } from '../../bench/matching-data';

/**
 * The neighbour search is a filter (shared letters bounded per common prefix) before Jaro-Winkler:
 * it must lose no token that tokenSim() pairs, whatever the order tokens arrive in and whether their
 * lists were searched before or after the later tokens came.
 */
function add(tn: TokenNeighbours, tok: string): number {
  return tn.add(tok, nicknameGroups(tok), tok.length > 1 ? doubleMetaphone(tok).primary : '');
}

function oracle(tokens: readonly string[]): (x: number) => number[] {
  const groups = tokens.map(nicknameGroups);
  const codes = tokens.map((s) => (s.length > 1 ? doubleMetaphone(s).primary : ''));
  return (x) => {
    const found: number[] = [];
    tokens.forEach((u, y) => {
      if (tokenSim(tokens[x]!, groups[x]!, codes[x]!, u, groups[y]!, codes[y]!) > 0) found.push(y);
    });
    return found;
  };
}

const sorted = (list: readonly number[]): number[] => [...list].sort((a, b) => a - b);

/** Tokens around the bound: shared prefixes of 0 to 4 characters, lengths 2 to 60, non-ASCII letters. */
function edgeTokens(seed: number, count: number): string[] {
  let s = seed;
  const rnd = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296;
  const alphabet = 'aeioulnrstmkbdyzāĀčŁ-';
  const out = new Set<string>();
  const stems = ['mart', 'mara', 'anna', 'joha', 'ngu', 'o', 'xu'];
  while (out.size < count) {
    const stem = stems[Math.floor(rnd() * stems.length)]!.slice(0, Math.floor(rnd() * 5));
    let tok = stem;
    const len = 1 + Math.floor(rnd() * (rnd() < 0.05 ? 60 : 9));
    while (tok.length < len) tok += alphabet[Math.floor(rnd() * alphabet.length)]!;
    out.add(tok);
  }
  return [...out];
}

describe('token neighbours: lossless against tokenSim', () => {
  it('generated display-name tokens and edge tokens: every list equals the exhaustive one', () => {
    const { identities } = generate(3, 800, 0);
    const words = new Set<string>();
    for (const r of identities)
      for (const w of String(r.attributes.displayName).toLowerCase().split(/\s+/)) words.add(w);
    const tokens = [...new Set([...words, ...edgeTokens(11, 500)])];
    const tn = new TokenNeighbours();
    // Half of them, lists searched, then the rest: the cached lists must take in the later tokens.
    const half = Math.floor(tokens.length / 2);
    const ids = tokens.slice(0, half).map((t) => add(tn, t));
    for (const x of ids.filter((_, i) => i % 3 === 0)) tn.neighbours(x);
    for (const t of tokens.slice(half)) ids.push(add(tn, t));
    expect(new Set(ids).size).toBe(tokens.length);
    let pairs = 0;
    const exhaustive = oracle(tn.tokens);
    for (let x = 0; x < tokens.length; x++) {
      const want = exhaustive(x);
      pairs += want.length;
      expect([x, sorted(tn.neighbours(x))]).toEqual([x, want]);
      expect([x, sorted(tn.searchNeighbours(x))]).toEqual([x, want]);
      for (const y of want) expect(tn.isNeighbour(x, y)).toBe(true);
    }
    // The edge tokens reach the filter's every case, not only equal tokens.
    expect(pairs).toBeGreaterThan(tokens.length * 3);
  });

  it('popcount counts the set bits of any 32-bit value', () => {
    for (const v of [0, 1, 0xff, 0x55555555, -1, 1 << 31, 0x7fffffff, 0x12345678]) {
      let n = 0;
      for (let i = 0; i < 32; i++) if ((v >>> i) & 1) n++;
      expect([v, popcount(v)]).toEqual([v, n]);
    }
  });
});
