import { FusionError } from '../errors';
import {
  ALGORITHMS,
  ATTRIBUTE_KINDS,
  DEFAULT_MAX_REVIEW_SHARE,
  type Algorithm,
  type AttributeKind,
  type AttributeMatchRule,
  MATCHING_MODELS,
  type MatchingModel,
  type MatchingSettings,
} from './types';

const DEFAULT_REVIEW_TOP_K = 10;
const MAX_REVIEW_TOP_K = 1000;
/** Default of matching.probabilityThreshold (probabilistic model); see docs/matching.md for why. */
export const DEFAULT_PROBABILITY_THRESHOLD = 0.9;

function invalid(field: string, value: unknown, allowed: string): FusionError {
  const shown = (JSON.stringify(value) ?? String(value)).slice(0, 80);
  // `value` as shown, so the configuration's report quotes the one wrong setting, not the section.
  return new FusionError('MATCHING_INVALID', `matching setting ${field} = ${shown} is invalid: allowed ${allowed}`, {
    field,
    value: shown,
    allowed,
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseThreshold(field: string, raw: unknown): number {
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 100)
    throw invalid(field, raw, 'a number from 0 to 100');
  return n;
}

function parseBoolean(field: string, raw: unknown): boolean {
  if (raw === undefined || raw === null) return false;
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw invalid(field, raw, 'true or false');
}

function parseRule(raw: unknown, at: string, scoreKey: 'threshold' | 'fusionScore'): AttributeMatchRule {
  if (!isObject(raw)) throw invalid(at, raw, 'an object {attribute, algorithm, threshold, mandatory}');
  const attribute = raw.attribute;
  if (typeof attribute !== 'string' || attribute.trim() === '')
    throw invalid(`${at}.attribute`, attribute, 'a non-empty attribute name');
  const algorithm = raw.algorithm;
  if (typeof algorithm !== 'string' || !(ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw invalid(`${at}.algorithm`, algorithm, `one of ${ALGORITHMS.join(', ')}`);
  }
  const rule: AttributeMatchRule = {
    attribute,
    algorithm: algorithm as Algorithm,
    threshold: parseThreshold(`${at}.${scoreKey}`, raw[scoreKey]),
    mandatory: parseBoolean(`${at}.mandatory`, raw.mandatory),
  };
  if (raw.kind !== undefined) {
    if (typeof raw.kind !== 'string' || !(ATTRIBUTE_KINDS as readonly string[]).includes(raw.kind))
      throw invalid(`${at}.kind`, raw.kind, `one of ${ATTRIBUTE_KINDS.join(', ')}`);
    rule.kind = raw.kind as AttributeKind;
  }
  return rule;
}

/**
 * The matching part of the connector configuration:
 * `{ "matching": { "attributes": [{ "attribute", "algorithm", "threshold", "mandatory" }], "reviewTopK" } }`.
 * The incumbent's `matchingConfigs: [{ attribute, algorithm, fusionScore, mandatory }]` is read
 * when `matching` is absent. No section: no attributes (nothing is ever a match).
 */
export function parseMatchingSettings(config: Readonly<Record<string, unknown>>): MatchingSettings {
  const section = config.matching;
  if (section === undefined && Array.isArray(config.matchingConfigs)) {
    const attributes = config.matchingConfigs.map((r, i) => parseRule(r, `matchingConfigs[${i}]`, 'fusionScore'));
    checkDuplicates(attributes, 'matchingConfigs');
    return { attributes, reviewTopK: DEFAULT_REVIEW_TOP_K, ...RULES_DEFAULTS };
  }
  if (section === undefined || section === null)
    return { attributes: [], reviewTopK: DEFAULT_REVIEW_TOP_K, ...RULES_DEFAULTS };
  if (!isObject(section)) throw invalid('matching', section, 'an object {attributes, reviewTopK}');
  const list = section.attributes ?? [];
  if (!Array.isArray(list)) throw invalid('matching.attributes', list, 'an array of attribute rules');
  const attributes = list.map((r, i) => parseRule(r, `matching.attributes[${i}]`, 'threshold'));
  checkDuplicates(attributes, 'matching.attributes');
  let reviewTopK = DEFAULT_REVIEW_TOP_K;
  if (section.reviewTopK !== undefined) {
    const k = section.reviewTopK;
    if (typeof k !== 'number' || !Number.isInteger(k) || k < 1 || k > MAX_REVIEW_TOP_K) {
      throw invalid('matching.reviewTopK', k, `an integer from 1 to ${MAX_REVIEW_TOP_K}`);
    }
    reviewTopK = k;
  }
  let model: MatchingModel = 'rules';
  if (section.model !== undefined) {
    if (typeof section.model !== 'string' || !(MATCHING_MODELS as readonly string[]).includes(section.model))
      throw invalid('matching.model', section.model, `one of ${MATCHING_MODELS.join(', ')}`);
    model = section.model as MatchingModel;
  }
  let probabilityThreshold = DEFAULT_PROBABILITY_THRESHOLD;
  if (section.probabilityThreshold !== undefined) {
    const t = section.probabilityThreshold;
    if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t >= 1)
      throw invalid('matching.probabilityThreshold', t, 'a number between 0 and 1 (exclusive)');
    probabilityThreshold = t;
  }
  let maxReviewShare = DEFAULT_MAX_REVIEW_SHARE;
  if (section.maxReviewShare !== undefined) {
    const m = section.maxReviewShare;
    if (typeof m !== 'number' || !Number.isFinite(m) || m <= 0 || m > 1)
      throw invalid(
        'matching.maxReviewShare',
        m,
        'a number above 0 and at most 1 (1 switches the review-flood guard off)',
      );
    maxReviewShare = m;
  }
  return { attributes, reviewTopK, model, probabilityThreshold, maxReviewShare };
}

const RULES_DEFAULTS = {
  model: 'rules',
  probabilityThreshold: DEFAULT_PROBABILITY_THRESHOLD,
  maxReviewShare: DEFAULT_MAX_REVIEW_SHARE,
} as const;

function checkDuplicates(rules: AttributeMatchRule[], at: string): void {
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    if (seen.has(r.attribute)) throw invalid(`${at}[${i}].attribute`, r.attribute, 'each attribute at most once');
    seen.add(r.attribute);
  });
}
