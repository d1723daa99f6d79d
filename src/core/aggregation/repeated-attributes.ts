/**
 * Three attributes the connector maintains on its own accounts repeat what a run keeps anyway for
 * each existing connector account: `id` is its key, `accounts` its source account ids, and `name`
 * is usually its `displayName`. A connector account waiting for its source accounts keeps its
 * attributes packed (packed-account.ts); these three are packed as a placeholder and restored when
 * read, which saves about 90 of its 300 packed bytes at a tenant like the simulator's (a 1M-identity
 * tenant has about 1M such accounts, all held at once when its source accounts start to be read).
 * The placeholder keeps the attribute's place, so the attributes read back with the same keys in
 * the same order; what was left out is recorded in a bit set, so a placeholder is never mistaken
 * for a value.
 */
import { ACCOUNTS_ATTRIBUTE, KEY_ATTRIBUTE, NAME_ATTRIBUTE } from './connector-account';

/** Bits of what `leaveOutRepeated` left out. */
const KEY = 1;
const ACCOUNTS = 2;
const NAME = 4;
/** The attribute `name` repeats when it equals this one (displayNameOf reads it first). */
const DISPLAY_NAME = 'displayName';
const PLACEHOLDER = 0;

export interface Trimmed {
  /** The attributes with a placeholder for each attribute left out (the input when none is). */
  attributes: Record<string, unknown>;
  /** What was left out: 0 when nothing. */
  left: number;
}

function sameIds(value: unknown, ids: readonly string[]): boolean {
  if (!Array.isArray(value) || value.length !== ids.length) return false;
  for (let i = 0; i < ids.length; i++) if (value[i] !== ids[i]) return false;
  return true;
}

/** Leaves out the attributes that repeat `key`, the source account ids `ids` or `displayName`. */
export function leaveOutRepeated(attributes: Record<string, unknown>, key: string, ids: readonly string[]): Trimmed {
  const own = (k: string): boolean => Object.prototype.hasOwnProperty.call(attributes, k);
  let left = 0;
  if (own(KEY_ATTRIBUTE) && attributes[KEY_ATTRIBUTE] === key) left |= KEY;
  if (own(ACCOUNTS_ATTRIBUTE) && sameIds(attributes[ACCOUNTS_ATTRIBUTE], ids)) left |= ACCOUNTS;
  const name = attributes[NAME_ATTRIBUTE];
  if (own(NAME_ATTRIBUTE) && typeof name === 'string' && own(DISPLAY_NAME) && attributes[DISPLAY_NAME] === name)
    left |= NAME;
  if (left === 0) return { attributes, left };
  // A copy keeps the keys' order; the caller's attributes stay as they were.
  const out = { ...attributes };
  if (left & KEY) out[KEY_ATTRIBUTE] = PLACEHOLDER;
  if (left & ACCOUNTS) out[ACCOUNTS_ATTRIBUTE] = PLACEHOLDER;
  if (left & NAME) out[NAME_ATTRIBUTE] = PLACEHOLDER;
  return { attributes: out, left };
}

/**
 * Puts back (in place, at their places) the attributes `leaveOutRepeated` left out; `ids` must be
 * the ids it was given (a fresh array is put back, so the caller may change it).
 */
export function restoreRepeated(
  attributes: Record<string, unknown>,
  left: number,
  key: string,
  ids: readonly string[],
): Record<string, unknown> {
  if (left & KEY) attributes[KEY_ATTRIBUTE] = key;
  if (left & ACCOUNTS) attributes[ACCOUNTS_ATTRIBUTE] = ids.slice();
  if (left & NAME) attributes[NAME_ATTRIBUTE] = attributes[DISPLAY_NAME];
  return attributes;
}
