/**
 * Seam to the matching engineer's parser (src/core/matching/matching-config.ts). Until it lands,
 * the section is carried unparsed and matching is off; the aggregation then emits every new account.
 */
export interface MatchingSection {
  /** The `matching` object as configured. */
  raw: unknown;
}

export function parseMatchingSection(raw: Record<string, unknown>): MatchingSection {
  return { raw: raw.matching };
}
