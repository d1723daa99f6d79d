/**
 * A full run's blocked pairs' levels, computed while its sources are still read (estimate-feed.ts).
 *
 * A pair's levels need the attribute roles, which the estimate reads from every record. The records
 * held once the blocking is settled (the baseline, at least 20,000 records) nearly always give the
 * roles every record gives, so the feed sets them then and computes each blocked slice's levels as it
 * blocks it, less the domain aliases (found over every record; applied by the estimate). The estimate
 * uses them only when its own roles are those: otherwise it computes every pair's levels, as it does
 * without a feed. Either way the levels, and so the parameters, are the one-call estimate's.
 */
import type { AttributeRoles } from './attribute-roles';
import type { BlockedAccount } from './blocked-account';
import type { RecordFeatures } from './record-features';
import { drain, MODEL_STEP, type Steps, ticker } from '../steps';

export interface EarlyLevels {
  /** The roles they were computed with (the object in use then). */
  roles: AttributeRoles;
  /** Blocked pair after blocked pair, attributes.length each, in the estimate's order, aliases not applied. */
  levels: Int8Array;
}

/** Pairs in the blocked accounts, the length of their levels buffer over the attributes' count. */
export function pairCount(blocked: readonly BlockedAccount[]): number {
  let size = 0;
  for (const acc of blocked) size += acc.candidates.length;
  return size;
}

/**
 * Levels every blocked pair into `out` (pair after pair, attributes.length each), with the domain
 * aliases or before them; yields every `MODEL_STEP` accounts. The one loop of the estimate and of the feed.
 */
export function* levelPairs(
  f: RecordFeatures,
  blocked: readonly BlockedAccount[],
  out: Int8Array,
  withAliases: boolean,
): Steps<void> {
  const tick = ticker(MODEL_STEP);
  const A = f.values.length;
  const lv = new Int8Array(A);
  let p = 0;
  for (const acc of blocked) {
    for (let k = 0; k < acc.candidates.length; k++, p++) {
      if (withAliases) f.pairLevels(acc.g, acc.candidates[k]!, acc.scores, k * A, lv);
      else f.levelsBeforeAliases(acc.g, acc.candidates[k]!, acc.scores, k * A, lv);
      out.set(lv, p * A);
    }
    if (tick()) yield;
  }
}

/** The levels of these blocked accounts' pairs with the roles in use; undefined before roles are set. */
export function levelsAhead(f: RecordFeatures, blocked: readonly BlockedAccount[]): EarlyLevels | undefined {
  const roles = f.roles;
  if (!roles) return undefined;
  const levels = new Int8Array(pairCount(blocked) * f.values.length);
  drain(levelPairs(f, blocked, levels, false));
  return { roles, levels };
}

/** The chunks of one feed, joined; undefined when one is missing or their roles differ. */
export function joinLevels(chunks: readonly (EarlyLevels | undefined)[]): EarlyLevels | undefined {
  const roles = chunks[0]?.roles;
  if (!roles || chunks.some((c) => c?.roles !== roles)) return undefined;
  let size = 0;
  for (const c of chunks) size += c!.levels.length;
  const levels = new Int8Array(size);
  let at = 0;
  for (const c of chunks) {
    levels.set(c!.levels, at);
    at += c!.levels.length;
  }
  return { roles, levels };
}
