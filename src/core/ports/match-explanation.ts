// The explanation of a probabilistic match as review forms receive it; matching fills it in.
/** One attribute's contribution to a probabilistic match: its comparison level and that level's weight. */
export interface LevelContribution {
  attribute: string;
  /** Comparison level name, e.g. "exact", "fuzzy >= 0.92", "different", "missing". */
  level: string;
  /** log2(m/u) of that level, after term-frequency adjustment; 0 for missing. */
  weight: number;
}
