import type { Prng } from './prng';
import { NICKNAMES } from './tenant-names';

/** Realistic variations of a person's name, used to plant duplicates that exact matching misses. */
export interface Person {
  firstName: string;
  lastName: string;
  email: string;
}

export type Variation = 'typo' | 'nickname' | 'swap' | 'diacritics' | 'emailDomain';
export const VARIATIONS: readonly Variation[] = ['typo', 'nickname', 'swap', 'diacritics', 'emailDomain'];

const NICK_OF = new Map<string, string[]>();
for (const [full, nick] of NICKNAMES) {
  NICK_OF.set(full, [...(NICK_OF.get(full) ?? []), nick]);
  NICK_OF.set(nick, [...(NICK_OF.get(nick) ?? []), full]);
}

const ACCENT: Record<string, string> = { e: 'é', a: 'á', o: 'ö', u: 'ü', n: 'ñ', c: 'ç', i: 'í' };

export function stripDiacritics(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ø/g, 'o')
    .replace(/Ø/g, 'O')
    .replace(/å/g, 'a');
}

export function asciiLocal(s: string): string {
  return stripDiacritics(s)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** A one-character slip (transposition, omission or doubling) that always changes the string. */
function typo(prng: Prng, s: string): string {
  if (s.length < 4) return s + s.charAt(s.length - 1);
  const i = 1 + prng.int(s.length - 2);
  const kind = prng.int(3);
  if (kind === 0 && s.charAt(i) !== s.charAt(i + 1))
    return s.slice(0, i) + s.charAt(i + 1) + s.charAt(i) + s.slice(i + 2);
  if (kind === 1) return s.slice(0, i) + s.slice(i + 1);
  return s.slice(0, i) + s.charAt(i) + s.slice(i);
}

function toggleDiacritics(prng: Prng, s: string): string {
  const stripped = stripDiacritics(s);
  if (stripped !== s) return stripped;
  const positions = [...s].map((c, i) => (ACCENT[c] ? i : -1)).filter((i) => i >= 0);
  if (positions.length === 0) return s;
  const at = prng.pick(positions);
  return s.slice(0, at) + (ACCENT[s.charAt(at)] as string) + s.slice(at + 1);
}

/** Applies a variation; falls back to a typo when the variation cannot change this name. */
export function vary(
  prng: Prng,
  p: Person,
  variation: Variation,
  otherDomain: string,
): { person: Person; applied: Variation } {
  const local = p.email.split('@')[0] ?? '';
  switch (variation) {
    case 'nickname': {
      const nicks = NICK_OF.get(p.firstName);
      if (nicks) return { person: { ...p, firstName: prng.pick(nicks) }, applied: 'nickname' };
      break;
    }
    case 'swap':
      if (p.firstName !== p.lastName)
        return { person: { ...p, firstName: p.lastName, lastName: p.firstName }, applied: 'swap' };
      break;
    case 'diacritics': {
      const first = toggleDiacritics(prng, p.firstName);
      if (first !== p.firstName) return { person: { ...p, firstName: first }, applied: 'diacritics' };
      const last = toggleDiacritics(prng, p.lastName);
      if (last !== p.lastName) return { person: { ...p, lastName: last }, applied: 'diacritics' };
      break;
    }
    case 'emailDomain':
      return { person: { ...p, email: `${local}@${otherDomain}` }, applied: 'emailDomain' };
    default:
      break;
  }
  if (prng.chance(0.5)) return { person: { ...p, firstName: typo(prng, p.firstName) }, applied: 'typo' };
  return { person: { ...p, lastName: typo(prng, p.lastName) }, applied: 'typo' };
}
