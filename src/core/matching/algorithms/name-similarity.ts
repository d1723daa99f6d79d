/**
 * Name similarity: tokens paired by their best Jaro-Winkler, nickname or sound-alike agreement.
 * The kernel (name-matcher.ts) and its index (indexes/name-index.ts) both build on it.
 */
import { nameTokens } from '../normalize';
import { nicknameGroups } from '../nicknames';
import { doubleMetaphone } from './double-metaphone';
import { jaroWinkler } from './jaro-winkler';
import { toScore } from './kernel';

/** Names with more tokens are cut: the pairing is quadratic in tokens and real names are short. */
export const MAX_NAME_TOKENS = 8;

export interface NameValue {
  text: string;
  tokens: string[];
  groups: (readonly number[])[];
  /** Double Metaphone primary code per token ('' for one-letter tokens). */
  codes: string[];
}

/**
 * Prepared names of recent values, shared by the records holding one (never changed once made).
 * Namesakes are common (a population's usual first names and surnames; at 1M most pairs that pass
 * both mandatory rules of bench:matching's main configuration), and a shared value lets nameScore
 * see equal names from their pointers, without loading either record's text. Preparing is a
 * function of the text alone, so a hit is the value preparing would make. Bounded like the
 * metaphone memo: emptied when full, so a worker's memory does not grow with the tenants it served.
 */
const memo = new Map<string, NameValue | null>();
const MEMO_MAX = 65_536;

export function prepareName(normalised: string): NameValue | null {
  let value = memo.get(normalised);
  if (value !== undefined) return value;
  value = prepareNew(normalised);
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(normalised, value);
  return value;
}

function prepareNew(normalised: string): NameValue | null {
  const tokens = nameTokens(normalised).slice(0, MAX_NAME_TOKENS);
  if (tokens.length === 0) return null;
  return {
    text: tokens.join(' '),
    tokens,
    groups: tokens.map(nicknameGroups),
    codes: tokens.map((t) => (t.length > 1 ? doubleMetaphone(t).primary : '')),
  };
}

function sharesGroup(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (b.includes(a[i]!)) return true;
  return false;
}

/**
 * Token similarity 0..1: equal 1; an initial against a token starting with it 0.8; nicknames of
 * one name 0.9; otherwise Jaro-Winkler, raised to 0.9 when the Double Metaphone codes agree, and
 * 0 below 0.8 (unrelated tokens must not add up). The name index relies on: > 0 exactly when the
 * tokens are equal, initial-compatible, nicknames, metaphone-equal, or Jaro-Winkler >= 0.8.
 */
export function tokenSim(
  x: string,
  gx: readonly number[],
  cx: string,
  y: string,
  gy: readonly number[],
  cy: string,
): number {
  if (x === y) return 1;
  if (x.length === 1 || y.length === 1) return x.charCodeAt(0) === y.charCodeAt(0) ? 0.8 : 0;
  if (sharesGroup(gx, gy)) return 0.9;
  let s = jaroWinkler(x, y);
  if (cx.length > 0 && cx === cy) s = s > 0.9 ? s : 0.9;
  return s >= 0.8 ? s : 0;
}

const sims = new Float64Array(MAX_NAME_TOKENS * MAX_NAME_TOKENS);
const usedA = new Uint8Array(MAX_NAME_TOKENS);
const usedB = new Uint8Array(MAX_NAME_TOKENS);

/**
 * Order-insensitive: tokens are paired greedily by best similarity (one-to-one), and the score is
 * 2 * sum(paired similarities) / (tokens(a) + tokens(b)), so an extra or missing middle name costs
 * less than a wrong one. Equal normalised names score 100.
 */
export function nameScore(a: NameValue, b: NameValue): number {
  // One shared value (prepareName's memo): equal without loading b.
  if (a === b || a.text === b.text) return 100;
  const na = a.tokens.length;
  const nb = b.tokens.length;
  // Each value's arrays and a's token read once, not per token pair.
  const { tokens: ta, groups: ga, codes: ca } = a;
  const { tokens: tb, groups: gb, codes: cb } = b;
  for (let i = 0; i < na; i++) {
    const x = ta[i]!;
    const gx = ga[i]!;
    const cx = ca[i]!;
    for (let j = 0; j < nb; j++) sims[i * MAX_NAME_TOKENS + j] = tokenSim(x, gx, cx, tb[j]!, gb[j]!, cb[j]!);
  }
  usedA.fill(0);
  usedB.fill(0);
  let sum = 0;
  const pairs = na < nb ? na : nb;
  for (let p = 0; p < pairs; p++) {
    let best = 0;
    let bi = -1;
    let bj = -1;
    for (let i = 0; i < na; i++) {
      if (usedA[i] === 1) continue;
      for (let j = 0; j < nb; j++) {
        if (usedB[j] === 1) continue;
        const s = sims[i * MAX_NAME_TOKENS + j]!;
        if (s > best) {
          best = s;
          bi = i;
          bj = j;
        }
      }
    }
    if (bi < 0) break;
    usedA[bi] = 1;
    usedB[bj] = 1;
    sum += best;
  }
  return toScore((2 * sum) / (na + nb));
}
