/**
 * Phase 1 of matching ("block") for a slice of the new accounts: each account's candidates and their
 * pairwise evaluation. It depends only on the two records of each pair, so any thread holding the
 * same records computes the same slice; phase 2 ("finish", matcher.ts) merges slices in order.
 * Typed arrays only, so a slice crosses threads by transfer, not by copy of objects.
 */

/** Why an account was not compared (ACCOUNT_COMPARED: it was). */
export const ACCOUNT_COMPARED = 0;
export const ACCOUNT_MISSING_MANDATORY = 1;
/** Missing a mandatory attribute and without any value. */
export const ACCOUNT_MISSING_ALL = 2;
export const ACCOUNT_WITHOUT_VALUES = 3;

/** Generator of an account's candidates: an attribute index, or one of these. */
export const GENERATOR_UNION = -1;
export const GENERATOR_EXHAUSTIVE = -2;
/** The combined (key, name token) index of two mandatory attributes (indexes/combined-index.ts). */
export const GENERATOR_COMBINED = -3;

export interface BlockedSlice {
  /** New accounts of the slice: positions from..from+count-1 among the call's new records. */
  from: number;
  count: number;
  /** Per account: ACCOUNT_* status. */
  status: Uint8Array;
  /** Per account: candidates evaluated. */
  compared: Int32Array;
  /** Per account: the generator (attribute index or a GENERATOR_* constant). */
  generator: Int16Array;
  /** Per account k: its matched candidates are candidates[matchedStart[k] .. matchedStart[k+1]). */
  matchedStart: Int32Array;
  /** Record numbers of the candidates that passed the rules' thresholds (the blocked pairs). */
  candidates: Int32Array;
  /** Per matched candidate and attribute: the algorithm's score (-1 missing). */
  scores: Float64Array;
  /** Evaluated pairs by outcome: matched, below_threshold, mandatory_failed, value_missing. */
  outcomes: Float64Array;
  /** Full-scan probes: pairs (account offset in the slice, attribute index), flattened. */
  fullScans: Int32Array;
}

/** The typed arrays of a slice, for a postMessage transfer list. */
export function sliceBuffers(s: BlockedSlice): ArrayBuffer[] {
  return [s.status, s.compared, s.generator, s.matchedStart, s.candidates, s.scores, s.outcomes, s.fullScans].map(
    (a) => a.buffer as ArrayBuffer,
  );
}

/** Appends numbers to a growing typed array without one allocation per value. */
export class GrowingInt32 {
  private data = new Int32Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = v;
  }
  private grow(): void {
    const next = new Int32Array(this.data.length * 2);
    next.set(this.data);
    this.data = next;
  }
  done(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

export class GrowingFloat64 {
  private data = new Float64Array(64);
  length = 0;
  pushAll(values: Float64Array): void {
    while (this.length + values.length > this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data.set(values, this.length);
    this.length += values.length;
  }
  done(): Float64Array {
    return this.data.slice(0, this.length);
  }
}
