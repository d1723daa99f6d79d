/**
 * Parts of synthetic surnames (TenantSpec.surnames 'varied'): 26 x 12 x 18 = 5,616 surnames that mostly
 * sound different, so a large tenant's people are rarely namesakes of each other (with LAST_NAMES, every
 * one of its 15,000 first/last name pairs repeats from about 15,000 identities on).
 */
const SURNAME_HEADS = [
  'Ab',
  'Bel',
  'Cor',
  'Dun',
  'Eck',
  'Fal',
  'Gor',
  'Hal',
  'Ives',
  'Jor',
  'Kel',
  'Lam',
  'Mor',
  'Nor',
  'Ort',
  'Pel',
  'Quin',
  'Ros',
  'Sal',
  'Tor',
  'Ulv',
  'Var',
  'Wes',
  'Yar',
  'Zan',
  'Thr',
];
const SURNAME_MIDDLES = ['a', 'en', 'ib', 'og', 'ul', 'ath', 'ev', 'im', 'ok', 'uz', 'ar', 'es'];
const SURNAME_TAILS = [
  'by',
  'dale',
  'ford',
  'ham',
  'ley',
  'man',
  'ner',
  'ridge',
  'son',
  'ton',
  'wick',
  'worth',
  'kov',
  'pour',
  'stein',
  'gard',
  'vez',
  'quist',
];

/** A synthetic surname drawn with `pick`. */
export function variedSurname(pick: (list: readonly string[]) => string): string {
  return `${pick(SURNAME_HEADS)}${pick(SURNAME_MIDDLES)}${pick(SURNAME_TAILS)}`;
}
