/** One new account of a call as phase 2 scores it with the probabilistic model (slice-finish.ts). */
export interface BlockedAccount {
  /** Record number of the account. */
  g: number;
  /** Record numbers of its blocked candidates (they passed the mandatory attributes). */
  candidates: ArrayLike<number>;
  /**
   * Algorithm scores per candidate and attribute (-1 missing, DEFERRED_SCORE not computed yet),
   * candidates.length * attributes.
   */
  scores: ArrayLike<number>;
}
