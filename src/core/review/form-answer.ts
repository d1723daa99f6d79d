/**
 * Reads a reviewer's answer. Strict on purpose: the incumbent read the string "false" as true and
 * defaulted a missing toggle to "new identity". Here the toggle must be a boolean or exactly the
 * string "true"/"false"; anything else, both answers at once, no answer, or a candidate that was
 * not on the form is an `invalid` answer with a reason the operator can act on.
 */
import type { CandidateKind } from '../matching/types';
import { FIELD, type StoredCandidate } from './form-content';

export type FormAnswer =
  | { kind: 'new-identity'; comments?: string }
  | { kind: 'link'; identityId: string; candidateKind: CandidateKind; comments?: string }
  | { kind: 'invalid'; reason: string };

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** The toggle: true/false, the strings "true"/"false", or absent (null/undefined). */
export function coerceToggle(v: unknown): boolean | undefined | { invalid: string } {
  if (v === undefined || v === null) return undefined;
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  return { invalid: `the "${FIELD.newIdentity}" toggle is ${describe(v)}, expected true or false` };
}

/** The selected candidate: a string, or a one-element list of a string or {value}. */
function selected(v: unknown): string | undefined | { invalid: string } {
  if (v === undefined || v === null || v === '') return undefined;
  const one = Array.isArray(v) ? (v.length === 0 ? undefined : v.length === 1 ? v[0] : { many: v.length }) : v;
  if (one === undefined) return undefined;
  if (typeof one === 'string') return one === '' ? undefined : one;
  if (one && typeof one === 'object' && 'value' in one && typeof (one as { value: unknown }).value === 'string')
    return (one as { value: string }).value;
  return { invalid: `the "${FIELD.identity}" selection is ${describe(v)}, expected one candidate id` };
}

export function readFormAnswer(
  formData: Record<string, unknown>,
  candidates: readonly StoredCandidate[] | undefined,
): FormAnswer {
  const toggle = coerceToggle(formData[FIELD.newIdentity]);
  if (typeof toggle === 'object') return { kind: 'invalid', reason: toggle.invalid };
  const pick = selected(formData[FIELD.identity]);
  if (typeof pick === 'object') return { kind: 'invalid', reason: pick.invalid };
  const c = formData[FIELD.comments];
  const comments = typeof c === 'string' && c !== '' ? { comments: c } : {};
  if (toggle === true) {
    if (pick !== undefined)
      return { kind: 'invalid', reason: `the answer says both "new identity" and "same person as ${pick}"` };
    return { kind: 'new-identity', ...comments };
  }
  if (pick === undefined) {
    return {
      kind: 'invalid',
      reason:
        toggle === false
          ? `"new identity" is off but no candidate was chosen`
          : 'the form was completed without a decision',
    };
  }
  if (!candidates)
    return {
      kind: 'invalid',
      reason: `the form's candidate list is missing or unreadable, so "${pick}" cannot be checked`,
    };
  const hit = candidates.find((x) => x.id === pick);
  if (!hit)
    return { kind: 'invalid', reason: `"${pick}" is not one of the ${candidates.length} candidates of the form` };
  return { kind: 'link', identityId: hit.id, candidateKind: hit.kind, ...comments };
}
