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
 * either side (charlotte.rossi for "Charlottte Rossi", andrew.weber for "Andy Weber"): the given
 * name (or its initial) and the surname, each as written or within a typo or a nickname, and other
 * words names or single letters.
 */
export function localNearNames(local: string, names: readonly string[]): boolean {
  const words = local.split(/[^a-z]+/).filter((w) => w.length > 0);
  if (words.length < 2 || names.length < 2) return false;
  const last = names[names.length - 1]!;
  const near = (w: string, n: string): boolean =>
    w === n || (w.length > 1 && n.length > 1 && (jaroWinkler(w, n) >= 0.9 || sameGivenName(w, n)));
  const surname = (w: string): boolean => near(w, last) || joinedIn(w, names);
  const given = (w: string): boolean => near(w, names[0]!) || w === names[0]![0];
  // As in localFromNames: the given name or its initial, the surname, other words single letters (a middle initial).
  return (
    words.some(surname) &&
    words.some(given) &&
    words.every((w) => w.length === 1 || surname(w) || names.some((n) => near(w, n)))
  );
}

/**
 * Whether t is consecutive tokens of the whole written together: a login or address drops the
 * apostrophe and the hyphen that split a name (sarah.obrien for Sarah O'Brien, jeanluc for Jean-Luc).
 */
export function joinedIn(t: string, whole: readonly string[]): boolean {
  for (let i = 0; i < whole.length - 1; i++) {
    if (!t.startsWith(whole[i]!)) continue;
    let joined = whole[i]!;
    for (let j = i + 1; j < whole.length && joined.length < t.length; j++) {
      joined += whole[j]!;
      if (joined === t) return true;
    }
  }
  return false;
}
