/**
 * A batch's potential duplicates as a partition sends them to the run (issue 27), by column. The run's
 * own thread is what bounds a partitioned run, and it deserializes every batch: the structured clone
 * rebuilds objects one property at a time (250 accounts x 20 candidates: 10.6 ms on the 2-core VM), where
 * arrays of strings and typed arrays come across fast and the run rebuilds the objects itself (1.2 ms).
 * The rules model only (partitions decide nothing else): no probability, weight or explanation.
 */
import type { CandidateKind, MatchingSettings, PotentialDuplicate } from '../matching/types';

export interface FoundColumns {
  /** The accounts with potential duplicates, in the order found. */
  accounts: string[];
  /** Account a's candidates are ends[a - 1] (0 for the first) to ends[a] - 1. */
  ends: Int32Array;
  candidateIds: string[];
  /** The candidate's row in the run's candidate directory (MatchRecord.ref); -1: none known. */
  candidateRefs: Int32Array;
  /** The candidate's kind: its index in KINDS (0 identity, 1 connector account). */
  accountKinds: Uint8Array;
  scores: Float64Array;
  /** Candidate c's score on attribute i (the settings' order) at c * A + i; NaN: not on both sides. */
  attributeScores: Float64Array;
}

/** The column order of the per-attribute scores: the settings', in which the matcher writes `scores`. */
export function foundAttributes(settings: MatchingSettings): string[] {
  return settings.attributes.map((a) => a.attribute);
}

/** Candidate kinds by their number in `accountKinds`. */
const KINDS: readonly CandidateKind[] = ['identity', 'account'];

/** `attributes`: foundAttributes() of the run's settings. */
export function encodeFound(
  found: readonly [string, PotentialDuplicate[]][],
  attributes: readonly string[],
  refOf: (candidateId: string) => number | undefined = () => undefined,
): FoundColumns {
  const A = attributes.length;
  let total = 0;
  for (const [, list] of found) total += list.length;
  const cols: FoundColumns = {
    accounts: [],
    ends: new Int32Array(found.length),
    candidateIds: new Array<string>(total),
    candidateRefs: new Int32Array(total),
    accountKinds: new Uint8Array(total),
    scores: new Float64Array(total),
    attributeScores: new Float64Array(total * A).fill(Number.NaN),
  };
  let c = 0;
  found.forEach(([account, list], a) => {
    cols.accounts.push(account);
    for (const d of list) {
      if (d.probability !== undefined || d.matchWeight !== undefined || d.explanation !== undefined)
        throw new Error('partitioned matching: a rules partition found a probabilistic duplicate');
      cols.candidateIds[c] = d.candidateId;
      cols.candidateRefs[c] = refOf(d.candidateId) ?? -1;
      const kind = KINDS.indexOf(d.candidateKind);
      if (kind < 0) throw new Error(`partitioned matching: a candidate of unknown kind ${String(d.candidateKind)}`);
      cols.accountKinds[c] = kind;
      cols.scores[c] = d.score;
      for (let i = 0; i < A; i++) {
        const s = d.scores[attributes[i]!];
        if (s !== undefined) cols.attributeScores[c * A + i] = s;
      }
      c++;
    }
    cols.ends[a] = c;
  });
  return cols;
}

/** Calls `each` per account with its potential duplicates, as the partition's matcher built them. */
export function decodeFound(
  cols: FoundColumns,
  attributes: readonly string[],
  each: (account: string, found: PotentialDuplicate[]) => void,
): void {
  const A = attributes.length;
  const { accounts, ends, candidateIds, candidateRefs, accountKinds, scores, attributeScores } = cols;
  let c = 0;
  for (let a = 0; a < accounts.length; a++) {
    const accountId = accounts[a]!;
    const found: PotentialDuplicate[] = [];
    for (const end = ends[a]!; c < end; c++) {
      // In the settings' order, as the matcher wrote them: the review's JSON keeps it.
      const perAttribute: Record<string, number> = {};
      for (let i = 0; i < A; i++) {
        const s = attributeScores[c * A + i]!;
        if (!Number.isNaN(s)) perAttribute[attributes[i]!] = s;
      }
      const d: PotentialDuplicate = {
        accountId,
        candidateId: candidateIds[c]!,
        candidateKind: KINDS[accountKinds[c]!]!,
        score: scores[c]!,
        scores: perAttribute,
      };
      const ref = candidateRefs[c]!;
      if (ref >= 0) d.ref = ref;
      found.push(d);
    }
    each(accountId, found);
  }
}
