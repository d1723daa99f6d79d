/**
 * The platform's source-configuration form can only store flat fields, lists and card lists
 * (arrays of objects). Two settings of the core's configuration are shaped otherwise, so the
 * form (connector-spec.json) declares them in a form-friendly shape and this module turns that
 * shape into the core's before a command runs or is forwarded to a proxy server:
 *
 * - `sourceOptions` as a card list `[{source, forceAggregation, accountFilter}]` becomes the
 *   object keyed by source name the core reads: `{"<source>": {forceAggregation, accountFilter}}`.
 * - `matchingAttributes` (card list of `{attribute, algorithm, threshold, mandatory}`),
 *   `matchingReviewTopK`, `matchingModel`, `matchingProbabilityThreshold` and `matchingMaxReviewShare`
 *   become `matching: {attributes, reviewTopK, model, probabilityThreshold, maxReviewShare}`.
 *
 * A configuration already in the core's shape (written by hand, or sent by `fusion-proxy invoke`)
 * passes through unchanged.
 */
export const FORM_ONLY_KEYS = [
  'matchingAttributes',
  'matchingReviewTopK',
  'matchingModel',
  'matchingProbabilityThreshold',
  'matchingMaxReviewShare',
] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sourceOptionsFromCards(cards: unknown[]): unknown {
  const out: Record<string, unknown> = {};
  for (const card of cards) {
    // Anything unexpected is passed on whole so the core reports it with its own message.
    if (!isRecord(card) || typeof card.source !== 'string' || card.source === '' || card.source in out) return cards;
    const { source, ...options } = card;
    out[source] = options;
  }
  return out;
}

function isBlank(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

/** An optional select left empty on the form arrives blank: "no kind" (inferred), not an invalid kind. */
function withoutBlankKind(card: unknown): unknown {
  if (!isRecord(card) || !('kind' in card) || !isBlank(card.kind)) return card;
  const { kind: _blank, ...rest } = card;
  return rest;
}

export function fromPlatformForm(config: Record<string, unknown>): Record<string, unknown> {
  const {
    matchingAttributes,
    matchingReviewTopK,
    matchingModel,
    matchingProbabilityThreshold,
    matchingMaxReviewShare,
    ...rest
  } = config;
  const out: Record<string, unknown> = rest;
  if (Array.isArray(rest.sourceOptions)) out.sourceOptions = sourceOptionsFromCards(rest.sourceOptions);
  const formMatching =
    !isBlank(matchingAttributes) ||
    !isBlank(matchingReviewTopK) ||
    !isBlank(matchingModel) ||
    !isBlank(matchingProbabilityThreshold) ||
    !isBlank(matchingMaxReviewShare);
  if (formMatching && rest.matching === undefined) {
    const attributes = Array.isArray(matchingAttributes)
      ? matchingAttributes.map(withoutBlankKind)
      : isBlank(matchingAttributes)
        ? []
        : matchingAttributes;
    const reviewTopK =
      typeof matchingReviewTopK === 'string' && /^\d+$/.test(matchingReviewTopK.trim())
        ? Number(matchingReviewTopK)
        : matchingReviewTopK;
    const decimal = (v: unknown): unknown => (typeof v === 'string' && /^\s*\d*\.?\d+\s*$/.test(v) ? Number(v) : v);
    const probabilityThreshold = decimal(matchingProbabilityThreshold);
    const maxReviewShare = decimal(matchingMaxReviewShare);
    out.matching = {
      attributes,
      ...(isBlank(reviewTopK) ? {} : { reviewTopK }),
      ...(isBlank(matchingModel) ? {} : { model: matchingModel }),
      ...(isBlank(probabilityThreshold) ? {} : { probabilityThreshold }),
      ...(isBlank(maxReviewShare) ? {} : { maxReviewShare }),
    };
  }
  return out;
}
