/**
 * What the attributes are to each other, read from their values (not their names or algorithms): an
 * attribute whose value is contained in another's on most records (a first name or surname inside a
 * display name, the same value listed twice) is a part of it, so the two never count the same
 * evidence twice; a part that holds the last words of its whole is a surname; an attribute built from
 * the record's names on most records (a login such as jsmith) is compared like an e-mail local part.
 * An attribute's configured `kind` still decides its comparator.
 */
import { nameTokens } from '../normalize';
import { ATTRIBUTE_KINDS, type AttributeKind, type AttributeMatchRule } from '../types';
import { attributeKind } from './comparators';
import { joinedIn, localFromNames } from './local-part';

/** Records read for the roles (evenly spread over the records held). */
const SAMPLE = 20_000;
/** Records holding both values needed before a relation is concluded. */
const MIN_BOTH = 30;
/** Share of those records whose part value lies inside the whole's. */
const PART_SHARE = 0.7;
/** Share of a part's records where it holds the whole's last words, for a surname. */
const SURNAME_SHARE = 0.5;
/** Share of an attribute's records whose value is built from the record's names, for a login. */
const FROM_NAMES_SHARE = 0.5;

export interface AttributeRoles {
  /** Per attribute: the comparator kind (the configured kind, else from the values). */
  kinds: AttributeKind[];
  /** Per attribute: the attribute whose values hold its values (its whole), or -1. */
  partOf: number[];
}

/** Kinds that may be parts of another attribute or hold parts (e-mail and birth dates are compared as they are). */
const TEXTUAL: ReadonlySet<AttributeKind> = new Set(['name', 'surname', 'text', 'identifier']);

/**
 * Whether a part's tokens all lie inside its whole's (a given name inside the display name). A token
 * counts by its letters when it carries a number (isabella.kelathson2, a login whose number was given
 * because a namesake held the name first): the names inside it are the whole's, and an agreement on
 * them is the whole's evidence, not a second one. A token that is only a number says nothing either.
 */
export function partInside(part: readonly string[], whole: readonly string[]): boolean {
  let held = 0;
  for (const t of part) {
    if (whole.includes(t) || joinedIn(t, whole)) {
      held++;
      continue;
    }
    const letters = t.replace(/[0-9]+/g, '');
    if (letters === '') continue;
    // One letter left (E10023 beside the initial E) is a code, not a name.
    if (letters === t || letters.length < 2 || !(whole.includes(letters) || joinedIn(letters, whole))) return false;
    held++;
  }
  return held > 0;
}

function endsWith(whole: readonly string[], part: readonly string[]): boolean {
  if (part.length === 0 || part.length >= whole.length) return false;
  const off = whole.length - part.length;
  return part.every((t, k) => whole[off + k] === t);
}

/**
 * Roles without data: the configured or inferred kinds; a surname is a part of the first name
 * attribute (what the model assumed before it read the roles from the values).
 */
export function configuredRoles(rules: readonly AttributeMatchRule[]): AttributeRoles {
  const kinds = initialKinds(rules);
  // A full name (by its kind or algorithm) holds the surname; a given name promoted below does not.
  const name = rules.map(attributeKind).indexOf('name');
  return { kinds, partOf: kinds.map((k) => (k === 'surname' && name >= 0 ? name : -1)) };
}

const GIVEN_NAME = /^(first[-_ ]?name|given[-_ ]?name|forename)$/i;
const FAMILY_NAME = /^(last[-_ ]?name|surname|sn|family[-_ ]?name)$/i;

/**
 * The rules' kinds. Where no attribute is a name, a given name and a surname attribute (firstName,
 * lastName, no kind) are the record's names, as an e-mail attribute is known by what it is called:
 * without names an address built from them (edward.kelogley) was evidence of its own, and the
 * near namesakes of a tenant agreed on three attributes that all said the same.
 */
function initialKinds(rules: readonly AttributeMatchRule[]): AttributeKind[] {
  const kinds = rules.map(attributeKind);
  if (kinds.includes('name')) return kinds;
  const named = (re: RegExp): number =>
    rules.findIndex((r, i) => !r.kind && kinds[i] === 'text' && re.test(r.attribute));
  const given = named(GIVEN_NAME);
  const family = named(FAMILY_NAME);
  if (given < 0 || family < 0) return kinds;
  kinds[given] = 'name';
  kinds[family] = 'surname';
  return kinds;
}

/** Roles as stored with the parameters: per attribute name, its kind and its whole's name. */
export type StoredRoles = Record<string, { kind: AttributeKind; partOf?: string }>;

export function storeRoles(rules: readonly AttributeMatchRule[], roles: AttributeRoles): StoredRoles {
  const out: StoredRoles = {};
  rules.forEach((r, i) => {
    const w = roles.partOf[i]!;
    out[r.attribute] = w >= 0 ? { kind: roles.kinds[i]!, partOf: rules[w]!.attribute } : { kind: roles.kinds[i]! };
  });
  return out;
}

/** Stored roles for these rules; undefined when absent or not about these attributes. */
export function readRoles(rules: readonly AttributeMatchRule[], raw: unknown): AttributeRoles | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const stored = raw as Partial<StoredRoles>;
  const names = rules.map((r) => r.attribute);
  const kinds: AttributeKind[] = [];
  const partOf: number[] = [];
  for (const r of rules) {
    const s = stored[r.attribute];
    if (!s || typeof s.kind !== 'string' || !(ATTRIBUTE_KINDS as readonly string[]).includes(s.kind)) return undefined;
    kinds.push(s.kind);
    const w = s.partOf === undefined ? -1 : names.indexOf(s.partOf);
    if (s.partOf !== undefined && (w < 0 || s.partOf === r.attribute)) return undefined;
    partOf.push(w);
  }
  return { kinds, partOf };
}

/**
 * Roles from the first `n` records' values (value(i, r): attribute i's first normalised value, ''
 * when missing). Deterministic: the index matcher and the oracle conclude the same.
 */
export function detectRoles(
  rules: readonly AttributeMatchRule[],
  value: (attribute: number, record: number) => string,
  n: number,
): AttributeRoles {
  const roles: AttributeRoles = { kinds: initialKinds(rules), partOf: rules.map(() => -1) };
  const A = rules.length;
  const step = Math.max(1, Math.floor(n / SAMPLE));
  const sample: number[] = [];
  for (let r = 0; r < n; r += step) sample.push(r);
  const tokens = rules.map((_, i) =>
    TEXTUAL.has(roles.kinds[i]!) || !rules[i]!.kind ? sample.map((r) => nameTokens(value(i, r))) : [],
  );
  const textual = (i: number): boolean => TEXTUAL.has(roles.kinds[i]!) && tokens[i]!.length > 0;
  // share[i][j]: records where i's value lies inside j's, among those holding both.
  const share = (i: number, j: number): number => {
    let both = 0;
    let inside = 0;
    sample.forEach((_, k) => {
      const ti = tokens[i]![k]!;
      const tj = tokens[j]![k]!;
      if (ti.length === 0 || tj.length === 0) return;
      both++;
      if (partInside(ti, tj)) inside++;
    });
    return both >= MIN_BOTH ? inside / both : 0;
  };
  for (let i = 0; i < A; i++) {
    if (!textual(i)) continue;
    let best = -1;
    let bestShare = PART_SHARE;
    for (let j = 0; j < A; j++) {
      if (j === i || !textual(j)) continue;
      const s = share(i, j);
      // Two copies of one value: the later attribute is the part.
      if (s >= bestShare && !(j > i && share(j, i) >= PART_SHARE)) {
        best = j;
        bestShare = s;
      }
    }
    roles.partOf[i] = best;
  }
  // A part of a part belongs to the outermost whole (no cycles: copies resolved above).
  for (let i = 0; i < A; i++) {
    let w = roles.partOf[i]!;
    for (let hops = 0; w >= 0 && roles.partOf[w]! >= 0 && hops < A; hops++) w = roles.partOf[w]!;
    roles.partOf[i] = w;
  }
  for (let i = 0; i < A; i++) {
    const w = roles.partOf[i]!;
    if (w < 0 || rules[i]!.kind) continue;
    let held = 0;
    let last = 0;
    sample.forEach((_, k) => {
      const ti = tokens[i]![k]!;
      if (ti.length === 0 || tokens[w]![k]!.length === 0) return;
      held++;
      if (endsWith(tokens[w]![k]!, ti)) last++;
    });
    if (held > 0 && last / held >= SURNAME_SHARE) roles.kinds[i] = 'surname';
  }
  const names = sample.map((_, k) => recordNames(roles, (i) => tokens[i]![k]));
  for (let i = 0; i < A; i++) {
    // A name is not built from itself: only other attributes (a login, an account name) can be.
    const k = roles.kinds[i];
    if (rules[i]!.kind || roles.partOf[i]! >= 0 || k === 'email' || k === 'name' || k === 'surname' || !textual(i))
      continue;
    if (roles.partOf.includes(i) || i === namesAttribute(roles)) continue;
    let held = 0;
    let built = 0;
    sample.forEach((r, k) => {
      const v = value(i, r);
      if (v === '' || names[k]!.length === 0) return;
      held++;
      if (localFromNames(v, names[k]!)) built++;
    });
    if (held >= MIN_BOTH && built / held >= FROM_NAMES_SHARE) roles.kinds[i] = 'email';
  }
  return roles;
}

/** The attribute whose tokens are a record's names: the whole that has parts, else the first name attribute. */
export function namesAttribute(roles: AttributeRoles): number {
  const whole = roles.partOf.find((w) => w >= 0);
  if (whole !== undefined) return whole;
  return roles.kinds.indexOf('name');
}

/**
 * A record's names (for addresses built from them): the whole name's tokens, else its parts' (given
 * name first, surname last), else every name and surname attribute's.
 */
export function recordNames(
  roles: AttributeRoles,
  tokensOf: (attribute: number) => readonly string[] | undefined,
): readonly string[] {
  const whole = namesAttribute(roles);
  const of = (i: number): readonly string[] => tokensOf(i) ?? [];
  // A given name promoted to the names (firstName "Jean-Luc") holds no surname: one standing apart joins it.
  const apart = roles.kinds.some((k, i) => k === 'surname' && roles.partOf[i] === -1 && i !== whole);
  // The whole name's own token list, not a copy: the model keeps one per record (~50 bytes each).
  if (whole >= 0 && of(whole).length >= 2 && !apart) return of(whole);
  const parts = roles.kinds
    .map((kind, i) => ({ kind, i }))
    // Without a whole, an attribute that is no part of one (partOf -1) is not a name for that.
    .filter(
      ({ kind, i }) =>
        i !== whole && ((whole >= 0 && roles.partOf[i] === whole) || kind === 'name' || kind === 'surname'),
    )
    .sort((a, b) => Number(a.kind === 'surname') - Number(b.kind === 'surname'));
  const out: string[] = whole >= 0 ? [...of(whole)] : [];
  for (const { i } of parts) for (const t of of(i)) if (!out.includes(t)) out.push(t);
  return out;
}
