/**
 * Bridge to the matching engineer's parser (src/core/matching/matching-config.ts): the `matching`
 * section, or the incumbent's `matchingConfigs`, becomes MatchingSettings. No rules = matching off.
 */
import { parseMatchingSettings } from '../matching/matching-config';
import type { MatchingSettings } from '../matching/types';

export type MatchingSection = MatchingSettings;

export function parseMatchingSection(raw: Record<string, unknown>): MatchingSection {
  return parseMatchingSettings(raw);
}
