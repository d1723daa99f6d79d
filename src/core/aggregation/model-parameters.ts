/**
 * Where the probabilistic model's estimated parameters live between runs: the connector's own source,
 * under MODEL_PARAMETERS_KEY of its connectorAttributes, so they survive a Redis wipe. A full
 * aggregation re-estimates them from all the data and stores them; a run that reads fewer accounts
 * (limited by "Aggregation batch size" or an account filter) reuses them, since an estimate from part
 * of the data is worse than the last full one. A full run estimates from the baseline and all its new
 * accounts; one with too few of them (or of candidate pairs) keeps the stored parameters.
 */
import type { MatchingSettings, ModelParameters } from '../matching/types';

export const MODEL_PARAMETERS_KEY = 'fusionMatchingModel';

/**
 * Below this many new accounts, or candidate pairs among them, an estimate of m and the prior says
 * little (u, from random pairs of all records, is fine): a full run keeps usable stored parameters;
 * with none it uses and stores the estimate (all the data there is; the next full run re-estimates)
 * but warns.
 */
export const FEW_NEW_ACCOUNTS = 50;
export const FEW_CANDIDATE_PAIRS = 50;

export type StoredParameters = { parameters: ModelParameters } | { problem: string };

function finite(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** A probability the model divides by and takes the logarithm of: (0, 1], or (0, 1) for the prior. */
function probability(v: number, open: boolean): boolean {
  return v > 0 && (open ? v < 1 : v <= 1);
}

/** Parameters are hand-editable on the source: a value out of range would give absurd weights, so it is refused. */
function shapeProblem(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return 'none are stored';
  if (typeof raw !== 'object' || Array.isArray(raw)) return 'the stored value is not an object';
  const o = raw as Record<string, unknown>;
  if (o.version !== 1) return `unknown version ${JSON.stringify(o.version)}`;
  if (typeof o.estimatedAt !== 'string' || !finite(o.records) || !finite(o.prior)) {
    return 'estimatedAt, records or prior is missing';
  }
  if (!probability(o.prior, true)) return `prior ${o.prior} is not between 0 and 1 (exclusive)`;
  if (!Array.isArray(o.attributes)) return 'attributes is not a list';
  for (const a of o.attributes as unknown[]) {
    const attr = a as { attribute?: unknown; levels?: unknown } | null;
    if (!attr || typeof attr.attribute !== 'string' || !Array.isArray(attr.levels)) return 'an attribute is malformed';
    for (const l of attr.levels as unknown[]) {
      const level = l as { level?: unknown; m?: unknown; u?: unknown } | null;
      if (!level || typeof level.level !== 'string' || !finite(level.m) || !finite(level.u)) {
        return `a level of ${attr.attribute} is malformed`;
      }
      if (!probability(level.m as number, false) || !probability(level.u as number, false)) {
        return `${attr.attribute} level ${level.level}: m ${level.m as number} and u ${level.u as number} must be in (0, 1]`;
      }
    }
  }
  return undefined;
}

/**
 * The stored parameters when they are usable with these settings: well-formed and estimated for the
 * same matching attributes (a changed configuration needs a new estimate). Otherwise why not.
 */
export function readStoredParameters(
  connectorAttributes: Record<string, unknown>,
  settings: MatchingSettings,
): StoredParameters {
  const raw = connectorAttributes[MODEL_PARAMETERS_KEY];
  const problem = shapeProblem(raw);
  if (problem) return { problem };
  const parameters = raw as ModelParameters;
  const stored = parameters.attributes.map((a) => a.attribute).sort();
  const configured = [...new Set(settings.attributes.map((a) => a.attribute))].sort();
  if (stored.join('\u0000') !== configured.join('\u0000')) {
    return {
      problem: `they were estimated for the attributes ${stored.join(', ') || '(none)'}, the configuration matches on ${configured.join(', ')}`,
    };
  }
  return { parameters };
}
