import type { AttributeDefinition } from '../config/fusion-config';

/**
 * A character normalizeText may change: anything outside printable ASCII, an apostrophe or a
 * backtick (control characters only take the long way). NFD leaves ASCII as it is, so a string
 * without one is returned unchanged without the five passes.
 */
const NEEDS_NORMALISING = /[^\x20-\x26\x28-\x5f\x61-\x7e]/;

/** Transliterates to ASCII (diacritics removed) and drops apostrophes: "Zoë O'Brien" -> "Zoe OBrien". */
export function normalizeText(s: string): string {
  if (!NEEDS_NORMALISING.test(s)) return s;
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/[Øø]/g, (c) => (c === 'Ø' ? 'O' : 'o'))
    .replace(/[Łł]/g, (c) => (c === 'Ł' ? 'L' : 'l'))
    .replace(/['’`´]/g, '');
}

function applyCase(s: string, option: AttributeDefinition['case']): string {
  switch (option) {
    case 'lower':
      return s.toLowerCase();
    case 'upper':
      return s.toUpperCase();
    case 'capitalize':
      return s
        .split(' ')
        .map((w) => (w ? w.charAt(0).toUpperCase() + w.slice(1) : w))
        .join(' ');
    default:
      return s;
  }
}

/** Case, then space removal, then normalisation, then truncation to maxLength. */
export function postProcess(
  value: string,
  def: Pick<AttributeDefinition, 'case' | 'spaces' | 'normalize' | 'maxLength'>,
  reserve = 0,
): string {
  let s = applyCase(value, def.case);
  if (def.spaces) s = s.replace(/\s+/g, '');
  if (def.normalize) s = normalizeText(s);
  if (def.maxLength !== undefined) s = s.slice(0, Math.max(0, def.maxLength - reserve));
  return s;
}
