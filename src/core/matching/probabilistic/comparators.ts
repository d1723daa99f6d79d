/**
 * Comparison levels of the probabilistic model, per attribute kind. A comparator turns a pair of
 * records into one level index (or MISSING); the levels' m/u are estimated elsewhere. Level 0 is
 * always exact agreement (the level the term-frequency adjustment applies to).
 */
import { jaroWinkler } from '../algorithms/jaro-winkler';
import { sameGivenName } from '../nicknames';
import { nameTokens } from '../normalize';
import type { AttributeKind, AttributeMatchRule } from '../types';
import { localFromNames, localNearNames, splitEmail } from './local-part';

export const MISSING = -1;

/** Bands of the attribute algorithm's score (0-100) below exact agreement. */
const SCORE_BANDS = [90, 80, 65] as const;

export interface Comparator {
  readonly kind: AttributeKind;
  readonly levels: readonly string[];
  /** Levels whose weight is 0 by construction (evidence already counted by another attribute). */
  readonly neutral: ReadonlySet<number>;
  /** level -> level whose u it uses (levels random pairs cannot estimate). */
  readonly uProxy: ReadonlyMap<number, number>;
  /**
   * Levels whose m is assumed, not learned, because the data cannot tell (named in the tuning
   * report): a numbered mailbox (john.smith2 against john.smith) is someone else's by construction,
   * and where most candidates are namesakes EM would learn the opposite.
   */
  readonly assumedM?: ReadonlyMap<number, number>;
  /** A part of another attribute: the level "inside the whole, counted there" (weight 0); else -1. */
  readonly partLevel: number;
  /** The level of this comparator for a level of its base kind's (a part's levels add one). */
  fromBase(level: number): number;
  /**
   * Level of a pair. va/vb: the records' first normalised values ('' when missing); score: the
   * algorithm's best score over the values (-1 missing); names: the records' name tokens (for the
   * e-mail's dependence on the names); tokensA/tokensB: nameTokens of va/vb when the caller holds them
   * (the model keeps them per record: tokenising per pair was a tenth of the scoring time).
   */
  level(
    va: string,
    vb: string,
    score: number,
    namesA: readonly string[],
    namesB: readonly string[],
    tokensA?: readonly string[],
    tokensB?: readonly string[],
  ): number;
}

export function attributeKind(rule: AttributeMatchRule): AttributeKind {
  if (rule.kind) return rule.kind;
  if (/e-?mail/i.test(rule.attribute)) return 'email';
  if (rule.algorithm === 'name-matcher') return 'name';
  if (rule.algorithm === 'exact') return 'identifier';
  return 'text';
}

function bandLevel(score: number, exact: boolean): number {
  if (exact || score >= 100) return 0;
  for (let i = 0; i < SCORE_BANDS.length; i++) if (score >= SCORE_BANDS[i]!) return i + 1;
  return SCORE_BANDS.length + 1;
}

const BAND_LEVELS = ['exact', ...SCORE_BANDS.map((b) => `fuzzy >= ${b}`), 'different'];

const same = (level: number): number => level;

const textComparator = (kind: AttributeKind): Comparator => ({
  kind,
  levels: BAND_LEVELS,
  neutral: new Set(),
  uProxy: new Map(),
  partLevel: -1,
  fromBase: same,
  level: (va, vb, score) => (score < 0 ? MISSING : bandLevel(score, va === vb)),
});

/** Level of a full name whose given name agrees and one surname holds the other (Smith-Jones / Smith). */
const NAME_SURNAME_EXTENDED = SCORE_BANDS.length + 1;
/** Level of a full name whose given name agrees and whose surname is another one (marriage, divorce). */
export const NAME_SURNAME_CHANGED = SCORE_BANDS.length + 2;

/** One surname's words all in the other's, which has more (a hyphenated or double surname). */
function extendedSurname(a: readonly string[], b: readonly string[]): boolean {
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return short.length > 0 && short.length < long.length && short.every((t) => long.includes(t));
}

/** Surnames that are other names, not a typo or a shared part of one (Smith-Jones / Smith). */
function otherSurname(a: readonly string[], b: readonly string[]): boolean {
  const ta = a.filter((t) => t.length > 1);
  const tb = b.filter((t) => t.length > 1);
  if (ta.length === 0 || tb.length === 0) return false;
  for (const x of ta) for (const y of tb) if (x === y || jaroWinkler(x, y) >= 0.9) return false;
  return true;
}

/**
 * Full names: the score bands, and a level of its own for a changed surname under the same given
 * name. People change surnames and keep everything else; a single "different" level would count the
 * change as strongly against as two unrelated names, and the surname and e-mail attributes that
 * change with it would count it again (the model makes those neutral).
 */
const nameComparator: Comparator = {
  kind: 'name',
  levels: [
    ...BAND_LEVELS.slice(0, -1),
    'same given name, surname extended',
    'same given name, other surname',
    'different',
  ],
  neutral: new Set(),
  uProxy: new Map(),
  partLevel: -1,
  fromBase: same,
  level: (va, vb, score, _namesA, _namesB, tokensA, tokensB) => {
    if (score < 0) return MISSING;
    if (va === vb || score >= 100) return 0;
    const ta = tokensA ?? nameTokens(va);
    const tb = tokensB ?? nameTokens(vb);
    if (ta.length >= 2 && tb.length >= 2 && sameGivenName(ta[0]!, tb[0]!)) {
      if (extendedSurname(ta.slice(1), tb.slice(1))) return NAME_SURNAME_EXTENDED;
      if (otherSurname(ta.slice(1), tb.slice(1))) return NAME_SURNAME_CHANGED;
    }
    const band = bandLevel(score, false);
    return band === SCORE_BANDS.length + 1 ? band + 2 : band;
  },
};

/** An identifier's format: letter runs as `a`, digit runs as `9`, other characters kept (C12345 -> a9). */
function identifierFormat(v: string): string {
  return v.replace(/\p{L}+/gu, 'a').replace(/\d+/g, '9');
}

/**
 * Identifiers: a different value in the same format is another number of the same numbering (someone
 * else's, as a rule); a value in another format comes from another numbering (a contractor's, another
 * system's), which one person holds beside the first as often as the sources say. Two levels, both
 * learned: a single "different" level weighed a second numbering like another person's number.
 */
const identifierComparator: Comparator = {
  kind: 'identifier',
  levels: ['exact', 'different, same format', 'different, other format'],
  neutral: new Set(),
  uProxy: new Map(),
  partLevel: -1,
  fromBase: same,
  level: (va, vb, score) => {
    if (score < 0) return MISSING;
    if (va === vb || score >= 100) return 0;
    return identifierFormat(va) === identifierFormat(vb) ? 1 : 2;
  },
};

/** Level of a surname that agrees because the full names agree (set by the model, not the comparator). */
export const SURNAME_IMPLIED = 1;

/**
 * Surnames per token: a shared token (Smith-Jones / Smith, de la Cruz / Cruz) is its own level.
 * When a name attribute holds the surname too and the names agree exactly, the surname's agreement
 * is the same evidence again: level SURNAME_IMPLIED, weight 0.
 */
const surnameComparator: Comparator = {
  kind: 'surname',
  levels: ['exact', 'implied by the name', 'shares a token', 'fuzzy >= 90', 'different'],
  neutral: new Set([SURNAME_IMPLIED]),
  uProxy: new Map(),
  partLevel: SURNAME_IMPLIED,
  fromBase: same,
  level: (va, vb, score, _namesA, _namesB, tokensA, tokensB) => {
    if (score < 0) return MISSING;
    if (va === vb || score >= 100) return 0;
    const ta = (tokensA ?? nameTokens(va)).filter((t) => t.length > 1);
    const tb = (tokensB ?? nameTokens(vb)).filter((t) => t.length > 1);
    if (ta.some((t) => tb.includes(t))) return 2;
    for (const x of ta) for (const y of tb) if (jaroWinkler(x, y) >= 0.9) return 3;
    return score >= 90 ? 3 : 4;
  },
};

const EMAIL_LEVELS = [
  'exact',
  'same local part, other domain',
  'local part from the names',
  'similar local part, other domain',
  'same domain, other local part',
  'same local part, other number',
  'local parts from other names',
  'same local part, alias domain',
  'different',
];

/** Level of two local parts that differ only in their number (john.smith2 / john.smith). */
const EMAIL_OTHER_NUMBER = 5;
/** Assumed share of true duplicates whose addresses differ only in a number (a re-created mailbox). */
const OTHER_NUMBER_M = 0.01;

/**
 * Level of two addresses each built from its own record's names where the surname changed (set by
 * the model: jane.doe@ against jane.smith@ is the name change again, not another person's mailbox).
 */
export const EMAIL_FROM_OTHER_NAMES = 6;

/**
 * Level of one local part at two domains the data shows to be one organisation's (set by the model
 * from its domain aliases): the same mailbox after a merger or a domain change.
 */
export const EMAIL_ALIAS_DOMAIN = 7;

/**
 * E-mail: local part and domain apart. Within one domain an organisation gives each person one
 * address, so a different local part there is evidence against (smith2@ is a namesake); a local
 * part built from names that agree is neutral (the names already counted it).
 */
const emailComparator: Comparator = {
  kind: 'email',
  levels: EMAIL_LEVELS,
  neutral: new Set([2, EMAIL_FROM_OTHER_NAMES]),
  // Random pairs almost never share a local part at alias domains: they stand in with exact agreement.
  uProxy: new Map([
    [EMAIL_OTHER_NUMBER, 4],
    [EMAIL_ALIAS_DOMAIN, 0],
  ]),
  assumedM: new Map([[EMAIL_OTHER_NUMBER, OTHER_NUMBER_M]]),
  partLevel: -1,
  fromBase: same,
  level: (va, vb, score, namesA, namesB) => {
    if (score < 0 || va === '' || vb === '' || va === vb) return emailLevel(va, vb, score, NO_PARTS, NO_PARTS);
    return emailLevel(va, vb, score, emailParts(va, namesA), emailParts(vb, namesB));
  },
};

/** What the e-mail level needs of one record's address, once per record (not per pair). */
export interface EmailParts {
  readonly local: string;
  readonly domain: string;
  /** localFromNames(local, the record's names). */
  readonly fromNames: boolean;
  /** The local part without digits (john.smith2 -> john.smith). */
  readonly localLetters: string;
  /** fromNames, or localNearNames: the record's names give or take a typo or a nickname. */
  readonly nearNames: boolean;
}

const NO_PARTS: EmailParts = { local: '', domain: '', fromNames: false, localLetters: '', nearNames: false };

export function emailParts(v: string, names: readonly string[]): EmailParts {
  const [local, domain] = splitEmail(v);
  const localLetters = /[0-9]/.test(local) ? local.replace(/[0-9]/g, '') : local;
  const fromNames = localFromNames(local, names);
  return { local, domain, fromNames, localLetters, nearNames: fromNames || localNearNames(local, names) };
}

/** The e-mail comparator's level from the records' prepared parts (va, vb: their addresses). */
export function emailLevel(va: string, vb: string, score: number, a: EmailParts, b: EmailParts): number {
  if (score < 0 || va === '' || vb === '') return MISSING;
  if (va === vb) return 0;
  const la = a.local;
  const lb = b.local;
  // john.smith2 against john.smith, in any domain: the number was given because someone else had the name.
  if (la !== lb && a.localLetters === b.localLetters) return EMAIL_OTHER_NUMBER;
  if (a.domain !== '' && a.domain === b.domain) return 4;
  const derived = a.fromNames && b.fromNames;
  if (la === lb) return derived ? 2 : 1;
  // Similar local parts that each spell their own record's names, give or take a typo or a
  // nickname (charlotte.rossi1 for "Charlottte Rossi"), are the names' similarity again.
  if (jaroWinkler(la, lb) >= 0.9) return a.nearNames && b.nearNames ? 2 : 3;
  return EMAIL_LEVELS.length - 1;
}

function dateDigits(v: string): string | null {
  const d = v.replace(/[^0-9]/g, '');
  if (d.length !== 8) return null;
  // yyyymmdd or ddmmyyyy/mmddyyyy: normalise to yyyy + the other four in given order.
  if (/^(19|20)/.test(d)) return d;
  return d.slice(4) + d.slice(0, 4);
}

/** Birth dates: a swapped day/month or one wrong digit is a level of its own. */
const birthdateComparator: Comparator = {
  kind: 'birthdate',
  levels: ['exact', 'day/month swapped or one digit', 'different'],
  neutral: new Set(),
  uProxy: new Map(),
  partLevel: -1,
  fromBase: same,
  level: (va, vb, score) => {
    if (score < 0) return MISSING;
    const a = dateDigits(va);
    const b = dateDigits(vb);
    if (a === null || b === null) return va === vb ? 0 : 2;
    if (a === b) return 0;
    if (a.slice(0, 4) === b.slice(0, 4) && a.slice(4, 6) === b.slice(6, 8) && a.slice(6, 8) === b.slice(4, 6)) return 1;
    let diff = 0;
    for (let i = 0; i < 8; i++) if (a[i] !== b[i]) diff++;
    return diff === 1 ? 1 : 2;
  },
};

export function comparatorFor(rule: AttributeMatchRule): Comparator {
  return comparatorOfKind(attributeKind(rule));
}

/**
 * A part of another attribute (a first name inside the display name): its own levels and, before
 * "different", the level "inside <whole>" for a pair whose both values lie inside the whole's (weight
 * 0: the whole compared them). A surname's "implied by the name" is that level already.
 */
export function partComparator(base: Comparator, whole: string): Comparator {
  if (base.partLevel >= 0) return base;
  const last = base.levels.length - 1;
  const up = (l: number): number => (l >= last ? l + 1 : l);
  return {
    kind: base.kind,
    levels: [...base.levels.slice(0, last), `inside ${whole}`, base.levels[last]!],
    neutral: new Set([...[...base.neutral].map(up), last]),
    uProxy: new Map([...base.uProxy].map(([l, p]) => [up(l), up(p)])),
    ...(base.assumedM ? { assumedM: new Map([...base.assumedM].map(([l, m]) => [up(l), m])) } : {}),
    partLevel: last,
    fromBase: (l) => (l < 0 ? l : up(base.fromBase(l))),
    level: (...args) => {
      const l = base.level(...args);
      return l < 0 ? l : up(l);
    },
  };
}

export function comparatorOfKind(kind: AttributeKind): Comparator {
  switch (kind) {
    case 'identifier':
      return identifierComparator;
    case 'surname':
      return surnameComparator;
    case 'email':
      return emailComparator;
    case 'birthdate':
      return birthdateComparator;
    case 'name':
      return nameComparator;
    case 'text':
      return textComparator(kind);
  }
}
