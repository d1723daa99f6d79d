import type { AttributeDefinition } from '../config/fusion-config';

/** Transliterates to ASCII (diacritics removed) and drops apostrophes: "Zoë O'Brien" -> "Zoe OBrien". */
export function normalizeText(s: string): string {
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
