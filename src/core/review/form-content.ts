/**
 * What a review form contains. Candidates are ranked by score; the best `topK` get a section
 * each (attributes and per-attribute scores); ALL candidates, ranked, are kept twice: in a
 * read-only "All candidates" text area of the form (what the reviewer reads) and as JSON in the
 * instance input `candidates` (what the next run validates an answer against). So an account with
 * 300 candidates gets a form saying "Showing 10 of 300 candidates" and nothing is dropped; the
 * reviewer may pick any of the 300 in the decision list.
 *
 * With the probabilistic model a candidate is ranked by its match probability and explains itself:
 * the probability, and per attribute the comparison level and its weight ("email: exact, +9.8;
 * lastName: different, -4.1"); the stored JSON keeps them so a renewed form shows the same.
 */
import { FusionError } from '../errors';
import { type CandidateKind, type LevelContribution, PRIOR_ATTRIBUTE, PRIOR_LEVEL } from '../matching/types';
import type { PendingReview, ReviewCandidate } from '../ports/review-queue';

/** Keys of the decision fields in the form data. */
export const FIELD = { newIdentity: 'newIdentity', identity: 'identity', comments: 'comments' } as const;

/** Inputs every instance of our forms carries (strings: the platform's form input is a string map in practice). */
export const INPUT = {
  accountId: 'accountId',
  accountName: 'accountName',
  sourceName: 'sourceName',
  fusionSourceId: 'fusionSourceId',
  round: 'round',
  candidatesTotal: 'candidatesTotal',
  candidatesShown: 'candidatesShown',
  candidates: 'candidates',
} as const;

/** A candidate as kept in the form input: id, kind, overall and per-attribute scores (and the explanation). */
export interface StoredCandidate {
  id: string;
  /** Display name (from the baseline), so a renewed form and a late notification name the candidate. */
  name?: string;
  kind: CandidateKind;
  score: number;
  scores: Record<string, number>;
  probability?: number;
  matchWeight?: number;
  explanation?: LevelContribution[];
}

/** Optional display data of a candidate (from the baseline the run read; see ReviewCandidate.details). */
export interface CandidateDetails {
  readonly name?: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
}

/**
 * Score desc, identities before accounts, then id: the matcher's ranking, applied again because the port does not
 * promise order.
 */
export function rankCandidates(candidates: readonly ReviewCandidate[]): ReviewCandidate[] {
  return [...candidates].sort((a, b) => {
    // Probabilistic: the probability is finer than the score (probability x 100, one decimal).
    if (a.probability !== undefined && b.probability !== undefined && a.probability !== b.probability)
      return b.probability - a.probability;
    if (a.score !== b.score) return b.score - a.score;
    if (a.candidateKind !== b.candidateKind) return a.candidateKind === 'identity' ? -1 : 1;
    return a.candidateId < b.candidateId ? -1 : a.candidateId > b.candidateId ? 1 : 0;
  });
}

/** The display data the matcher's caller attached to the candidates. */
export function candidateDetails(ranked: readonly ReviewCandidate[]): Map<string, CandidateDetails> {
  const out = new Map<string, CandidateDetails>();
  for (const c of ranked) if (c.details) out.set(c.candidateId, c.details);
  return out;
}

export function shownCount(total: number, topK: number): number {
  return Math.min(total, Math.max(1, Math.floor(topK)));
}

export function showingText(shown: number, total: number): string {
  return shown < total
    ? `Showing ${shown} of ${total} candidates (best first); all ${total} are listed under "All candidates"`
    : `${total} candidate${total === 1 ? '' : 's'} (best first)`;
}

function display(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map(display).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** "97.3%"; never rounds a near-certainty to 100% or a small chance to 0%. */
function probabilityText(p: number): string {
  if (p >= 0.9995 && p < 1) return '>99.9%';
  if (p > 0 && p < 0.0005) return '<0.1%';
  return `${(p * 100).toFixed(1)}%`;
}

/** "+9.8", "-4.1", "0". */
function weightText(w: number): string {
  const r = Math.round(w * 10) / 10;
  return r === 0 ? '0' : `${r > 0 ? '+' : ''}${r.toFixed(1)}`;
}

/** "email: exact, +9.8; lastName: different, -4.1". */
function explanationText(explanation: readonly LevelContribution[]): string {
  return explanation.map((e) => `${e.attribute}: ${e.level}, ${weightText(e.weight)}`).join('; ');
}

function candidateLabel(c: ReviewCandidate, details?: CandidateDetails): string {
  const who = details?.name
    ? `${details.name} (${c.candidateKind} ${c.candidateId})`
    : `${c.candidateKind} ${c.candidateId}`;
  return c.probability !== undefined
    ? `${who}, probability ${probabilityText(c.probability)}`
    : `${who}, score ${c.score}`;
}

/**
 * One line per candidate, ranked: "3. Ann Lee (identity 2c9…), score 91.5 [email 100, name 83]", or with the
 * probabilistic model "1. Ann Lee (identity 2c9…), probability 97.3% [email: exact, +9.8; lastName: different, -4.1]".
 */
export function candidateLines(
  ranked: readonly ReviewCandidate[],
  details: ReadonlyMap<string, CandidateDetails>,
): string[] {
  return ranked.map((c, i) => {
    const why = c.explanation?.length
      ? explanationText(c.explanation)
      : Object.entries(c.scores)
          .map(([a, s]) => `${a} ${s}`)
          .join(', ');
    return `${i + 1}. ${candidateLabel(c, details.get(c.candidateId))}${why ? ` [${why}]` : ''}`;
  });
}

/** One read-only field per attribute: the candidate's value, labelled with its score or its level and weight. */
function candidateFields(c: ReviewCandidate, i: number, d: CandidateDetails | undefined): Record<string, unknown>[] {
  const value = (attr: string): string => display(d?.attributes?.[attr]) || '(not available)';
  if (c.explanation?.length) {
    return c.explanation.map((e) =>
      readOnlyText(
        `candidate${i + 1}.${e.attribute}`,
        `${e.attribute} (${e.level}, ${weightText(e.weight)})`,
        // The prior is no attribute: it is where the weights start before any attribute is compared.
        e.attribute === PRIOR_ATTRIBUTE && e.level === PRIOR_LEVEL
          ? 'odds of a match before any attribute is compared'
          : value(e.attribute),
      ),
    );
  }
  return Object.entries(c.scores).map(([attr, score]) =>
    readOnlyText(`candidate${i + 1}.${attr}`, `${attr} (score ${score})`, value(attr)),
  );
}

function candidateDescription(c: ReviewCandidate): string | undefined {
  if (c.probability === undefined) return undefined;
  const weight = c.matchWeight !== undefined ? `match weight ${weightText(c.matchWeight)}; ` : '';
  return `Match probability ${probabilityText(c.probability)} (${weight}${c.explanation?.length ? explanationText(c.explanation) : 'no explanation'})`;
}

function readOnlyText(id: string, label: string, value: string): Record<string, unknown> {
  return { id, key: id, elementType: 'TEXT', config: { label, default: value, readOnly: true }, validations: [] };
}

function section(
  id: string,
  label: string,
  formElements: Record<string, unknown>[],
  description?: string,
): Record<string, unknown> {
  return {
    id,
    key: id,
    elementType: 'SECTION',
    config: { label, labelStyle: 'h3', showLabel: true, ...(description ? { description } : {}), formElements },
  };
}

export interface FormContent {
  description: string;
  formElements: Record<string, unknown>[];
  formInputSchema: Record<string, unknown>[];
  /** Instance input, without the round (set per instance). */
  formInput: Record<string, string>;
  ranked: ReviewCandidate[];
  shown: number;
}

/** The definition (elements and declared inputs) and instance input of one account's review. */
export function buildFormContent(
  review: PendingReview,
  fusionSourceId: string,
  topK: number,
  details: ReadonlyMap<string, CandidateDetails>,
): FormContent {
  if (review.candidates.length === 0) {
    throw new FusionError(
      'INPUT_INVALID',
      `Account ${review.accountName} [${review.sourceName}] has no candidates: there is nothing to review`,
      { accountId: review.accountId },
    );
  }
  const ranked = rankCandidates(review.candidates);
  const total = ranked.length;
  const shown = shownCount(total, topK);
  const showing = showingText(shown, total);

  const accountFields = Object.entries(review.attributes)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => readOnlyText(`account.${k}`, k, display(v)));
  const top = ranked.slice(0, shown).map((c, i) => {
    const d = details.get(c.candidateId);
    return section(
      `candidate${i + 1}`,
      `#${i + 1} ${candidateLabel(c, d)}`,
      candidateFields(c, i, d),
      candidateDescription(c),
    );
  });
  const all = candidateLines(ranked, details).join('\n');
  const options = ranked.map((c) => ({ label: candidateLabel(c, details.get(c.candidateId)), value: c.candidateId }));

  const formElements = [
    section(
      'account',
      `New account: ${review.accountName} [${review.sourceName}]`,
      accountFields,
      `Source account id ${review.accountId}`,
    ),
    section('candidates', showing, top),
    section('allCandidates', `All candidates (${total})`, [
      {
        id: 'allCandidatesList',
        key: 'allCandidatesList',
        elementType: 'TEXTAREA',
        config: { label: `All ${total} candidates, best first`, default: all, readOnly: true },
        validations: [],
      },
    ]),
    section(
      'decision',
      'Decision',
      [
        {
          id: FIELD.newIdentity,
          key: FIELD.newIdentity,
          elementType: 'TOGGLE',
          config: {
            label: 'Not a duplicate: this account is a new person',
            default: false,
            trueLabel: 'New identity',
            falseLabel: 'Same person as a candidate',
          },
          validations: [],
        },
        {
          id: FIELD.identity,
          key: FIELD.identity,
          elementType: 'SELECT',
          config: {
            label: 'Same person as',
            forceSelect: true,
            maximum: 1,
            dataSource: { dataSourceType: 'STATIC', config: { options } },
          },
          validations: [],
        },
        {
          id: FIELD.comments,
          key: FIELD.comments,
          elementType: 'TEXTAREA',
          config: { label: 'Comments' },
          validations: [],
        },
      ],
      'Either switch on "Not a duplicate", or choose the candidate this account belongs to (not both).',
    ),
  ];
  const stored: StoredCandidate[] = ranked.map((c) => ({
    id: c.candidateId,
    ...(details.get(c.candidateId)?.name ? { name: details.get(c.candidateId)?.name } : {}),
    kind: c.candidateKind,
    score: c.score,
    scores: c.scores,
    ...(c.probability !== undefined ? { probability: c.probability } : {}),
    ...(c.matchWeight !== undefined ? { matchWeight: c.matchWeight } : {}),
    ...(c.explanation ? { explanation: c.explanation } : {}),
  }));
  const formInput: Record<string, string> = {
    [INPUT.accountId]: review.accountId,
    [INPUT.accountName]: review.accountName,
    [INPUT.sourceName]: review.sourceName,
    [INPUT.fusionSourceId]: fusionSourceId,
    [INPUT.candidatesTotal]: String(total),
    [INPUT.candidatesShown]: String(shown),
    [INPUT.candidates]: JSON.stringify(stored),
  };
  const formInputSchema = [...Object.values(INPUT)].map((id) => ({ id, type: 'STRING', label: id, description: id }));
  return {
    description: `Review of account ${review.accountName} [${review.sourceName}] (id ${review.accountId}): ${showing}.`,
    formElements,
    formInputSchema,
    formInput,
    ranked,
    shown,
  };
}

/** The ranked candidates stored in an instance's input; undefined when absent or unreadable. */
export function storedCandidates(formInput: Record<string, unknown>): StoredCandidate[] | undefined {
  const raw = formInput[INPUT.candidates];
  if (typeof raw !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return undefined;
    const out: StoredCandidate[] = [];
    for (const c of parsed) {
      if (!c || typeof c !== 'object') return undefined;
      const o = c as Record<string, unknown>;
      if (typeof o.id !== 'string' || (o.kind !== 'identity' && o.kind !== 'account') || typeof o.score !== 'number')
        return undefined;
      out.push({
        id: o.id,
        kind: o.kind,
        score: o.score,
        scores: (o.scores && typeof o.scores === 'object' ? o.scores : {}) as Record<string, number>,
        ...(typeof o.name === 'string' && o.name ? { name: o.name } : {}),
        ...storedExplanation(o),
      });
    }
    return out;
  } catch {
    return undefined;
  }
}

/** The optional probabilistic fields of a stored candidate; malformed ones are dropped (the id still validates). */
function storedExplanation(
  o: Record<string, unknown>,
): Pick<StoredCandidate, 'probability' | 'matchWeight' | 'explanation'> {
  const out: Pick<StoredCandidate, 'probability' | 'matchWeight' | 'explanation'> = {};
  if (typeof o.probability === 'number') out.probability = o.probability;
  if (typeof o.matchWeight === 'number') out.matchWeight = o.matchWeight;
  if (Array.isArray(o.explanation)) {
    const ok = o.explanation.every(
      (e: unknown) =>
        !!e &&
        typeof (e as LevelContribution).attribute === 'string' &&
        typeof (e as LevelContribution).level === 'string' &&
        typeof (e as LevelContribution).weight === 'number',
    );
    if (ok) out.explanation = o.explanation as LevelContribution[];
  }
  return out;
}
