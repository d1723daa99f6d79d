/**
 * What an address's local part says about its record's names: built from them (john.smith, jsmith),
 * or near them (a typo or a nickname on either side). Agreeing on such a part is the names'
 * evidence again, which the e-mail comparator and the role detection both need to know.
 */
import { jaroWinkler } from '../algorithms/jaro-winkler';
import { sameGivenName } from '../nicknames';

export function splitEmail(v: string): [string, string] {
  const at = v.lastIndexOf('@');
  return at < 0 ? [v, ''] : [v.slice(0, at), v.slice(at + 1)];
}

/**
 * True when the local part is built from the record's own names (john.smith, jsmith, smith.j,
 * john.smith2, john.q.smith with a middle initial, jwashing cut to 8 letters from jwashington):
 * agreeing on it says no more than agreeing on the names.
 */
export function localFromNames(local: string, names: readonly string[]): boolean {
  const letters = local.replace(/[^a-z]/g, '');
  if (letters.length < 2 || names.length === 0) return false;
  const first = names[0]!;
  const last = names[names.length - 1]!;
  const forms = [
    first + last,
    first[0]! + last,
    last + first,
    last + first[0]!,
    first + last[0]!,
    first,
    last,
    names.join(''),
    first[0]! + names.slice(1).join(''),
  ];
  if (forms.includes(letters)) return true;
  // Cut to a length (8 letters is common): a long prefix of a full form.
  if (letters.length >= 6 && forms.slice(0, 4).some((f) => f.length > letters.length && f.startsWith(letters)))
    return true;
  // The names as words of the local part, other words single letters (a middle initial).
  const words = local.split(/[^a-z]+/).filter((w) => w.length > 0);
  const surname = names.length > 2 ? names.slice(1).join('') : last;
  if (words.length < 2 || !(words.includes(last) || words.includes(surname))) return false;
  const given = words.includes(first) || words.includes(first[0]!);
  return given && words.every((w) => w.length === 1 || w === surname || names.includes(w));
}

/**
 * True when a local part of two or more words spells the record's names with a typo or a nickname on
 * either side (charlotte.rossi for "Charlottte Rossi", andrew.weber for "Andy Weber"): every word
 * is a name, an initial, or within a typo or a nickname of one, and one of them is the surname.
 */
export function localNearNames(local: string, names: readonly string[]): boolean {
  const words = local.split(/[^a-z]+/).filter((w) => w.length > 0);
  if (words.length < 2 || names.length < 2) return false;
  const last = names[names.length - 1]!;
  const near = (w: string, n: string): boolean =>
    w === n || (w.length > 1 && n.length > 1 && (jaroWinkler(w, n) >= 0.9 || sameGivenName(w, n)));
  return (
    words.some((w) => near(w, last) || w === names.slice(1).join('')) &&
    words.every((w) => w.length === 1 || names.some((n) => near(w, n)) || w === names.slice(1).join(''))
  );
}
