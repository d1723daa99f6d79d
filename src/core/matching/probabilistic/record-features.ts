/**
 * The probabilistic model's view of each record: the first normalised value per attribute, value
 * frequencies, and what the comparison levels need once the attribute roles are known (name tokens,
 * the record's names, each address split and compared with the names), and the levels of a pair.
 * Values are kept from the start; the rest is derived when the roles are set (from stored parameters,
 * or detected from the values at the estimate) and for every record appended after.
 */
import type { AttributeRuntime } from '../attribute-runtime';
import type { NameValue } from '../algorithms/name-similarity';
import { attributeValues, nameTokens } from '../normalize';
import type { MatchRecord } from '../types';
import { type AttributeRoles, namesAttribute, partInside, recordNames } from './attribute-roles';
import {
  type Comparator,
  EMAIL_ALIAS_DOMAIN,
  EMAIL_FROM_OTHER_NAMES,
  NAME_SURNAME_CHANGED,
  SURNAME_IMPLIED,
  comparatorOfKind,
  emailLevel,
  partComparator,
} from './comparators';
import { aliasKey } from './domain-aliases';
import { DomainNumbers, EmailColumn, EmailView } from './email-column';
import { ValueColumn } from './value-column';
import { drain, type Steps, ticker } from '../steps';

/** Records derived between two yields (a few milliseconds). */
const DERIVE_STEP = 4096;

/**
 * Score of an attribute that does not block (a surname under a name, a weak attribute) left to the
 * model: both records hold a value, the score is computed only when the level needs it.
 */
export const DEFERRED_SCORE = -2;

/**
 * The name matcher's token list of the same value when it holds exactly these tokens (it keeps at
 * most MAX_NAME_TOKENS), else the list given.
 */
export function sharedTokens(tokens: string[], prepared: unknown): string[] {
  if (typeof prepared !== 'object' || prepared === null || !('tokens' in prepared)) return tokens;
  const other = (prepared as NameValue).tokens;
  if (other.length !== tokens.length) return tokens;
  for (let i = 0; i < tokens.length; i++) if (other[i] !== tokens[i]) return tokens;
  return other;
}

/**
 * The prepared value's own string when it is this value (a string-prepared algorithm) or holds it
 * (the name matcher's text), else `v`: the model then keeps no second copy of a display name.
 */
function sharedText(v: string, prepared: unknown): string {
  if (typeof prepared === 'string') return prepared === v ? prepared : v;
  if (typeof prepared !== 'object' || prepared === null || !('text' in prepared)) return v;
  const text = (prepared as NameValue).text;
  return text === v ? text : v;
}

const NO_TOKENS: string[] = [];

export class RecordFeatures {
  /** Per attribute: each record's first normalised value ('' missing) and how many records hold it. */
  readonly values: ValueColumn[];
  roles: AttributeRoles | undefined;
  comparators: Comparator[] = [];
  /** Per attribute: keeps name tokens (a whole name, its parts, names and surnames). */
  private tokenised: boolean[] = [];
  /** Per tokenised attribute: each value's name tokens, by value number (records share a surname's). */
  private tokens: (readonly string[])[][] = [];
  /** Per record: its names (for addresses and logins built from them). */
  private names: (readonly string[])[] = [];
  /** Per attribute compared as an e-mail: each record's address split and compared with its names. */
  private email: EmailColumn[] = [];
  /** The e-mail columns' domains, numbered. */
  private readonly domains = new DomainNumbers();
  private readonly viewA = new EmailView();
  private readonly viewB = new EmailView();
  private emailAttrs: number[] = [];
  /**
   * Per part attribute (roles.partOf >= 0): per record, whether its part's tokens all lie inside its
   * whole's. A property of the one record, asked for every pair it is in (two per pair and part):
   * computed once when the record is derived, instead of per pair.
   */
  private insideOwn: boolean[][] = [];
  private nameAttr = -1;
  /** Records whose derived state is computed. */
  private derived = 0;
  /** Alias domain pairs (aliasKey) of the parameters in use. */
  aliases = new Set<string>();

  constructor(private readonly runtimes: readonly AttributeRuntime[]) {
    this.values = runtimes.map(() => new ValueColumn());
  }

  get size(): number {
    // Every value column holds every record.
    return this.values[0]?.size ?? 0;
  }

  /** Record r's name tokens on attribute i (a tokenised one, and r derived). */
  private tokensOf(i: number, r: number): readonly string[] {
    const id = this.values[i]!.idOf(r);
    return id < 0 ? NO_TOKENS : this.tokens[i]![id]!;
  }

  /** Sets the roles (comparators, what is derived per record) and derives every record held. */
  setRoles(roles: AttributeRoles): void {
    drain(this.setRolesSteps(roles));
  }

  /** setRoles in steps (steps.ts): every record held is derived, 200k of them at 100k x 100k. */
  *setRolesSteps(roles: AttributeRoles): Steps<void> {
    // The roles in use again (set early while the sources were read, estimate-feed.ts): every record
    // derived so far is derived as they would derive it; only those appended since remain.
    if (this.roles && sameRoles(this.roles, roles)) return yield* this.derive();
    this.roles = roles;
    const names = this.runtimes.map((rt) => rt.rule.attribute);
    this.comparators = roles.kinds.map((kind, i) => {
      const base = comparatorOfKind(kind);
      const whole = roles.partOf[i]!;
      return whole >= 0 ? partComparator(base, names[whole]!) : base;
    });
    this.nameAttr = namesAttribute(roles);
    this.tokenised = roles.kinds.map(
      (k, i) => k === 'name' || k === 'surname' || roles.partOf[i]! >= 0 || roles.partOf.includes(i),
    );
    this.emailAttrs = roles.kinds.flatMap((k, i) => (k === 'email' ? [i] : []));
    this.tokens = this.runtimes.map(() => []);
    this.names = [];
    this.email = this.values.map((col) => new EmailColumn(col, this.domains));
    this.insideOwn = this.runtimes.map(() => []);
    this.derived = 0;
    yield* this.derive();
  }

  append(records: readonly MatchRecord[]): void {
    const base = this.size;
    records.forEach((rec, k) => {
      this.runtimes.forEach((rt, i) => {
        const v = attributeValues(rec.attributes[rt.rule.attribute])[0] ?? '';
        this.values[i]!.push(v === '' ? v : sharedText(v, rt.first(base + k)));
      });
    });
    if (this.roles) drain(this.derive());
  }

  private *derive(): Steps<void> {
    const roles = this.roles!;
    const tick = ticker(DERIVE_STEP);
    for (let r = this.derived; r < this.size; r++) {
      this.runtimes.forEach((rt, i) => {
        if (!this.tokenised[i]) return;
        const col = this.values[i]!;
        const id = col.idOf(r);
        // Values are numbered as records first hold them: a value not seen before is the next number.
        if (id === this.tokens[i]!.length) this.tokens[i]!.push(sharedTokens(nameTokens(col.text(id)), rt.first(r)));
      });
      for (let i = 0; i < roles.partOf.length; i++) {
        const w = roles.partOf[i]!;
        if (w >= 0) this.insideOwn[i]!.push(partInside(this.tokensOf(i, r), this.tokensOf(w, r)));
      }
      const names = recordNames(roles, (i) => (this.tokenised[i] ? this.tokensOf(i, r) : undefined));
      this.names.push(names);
      for (const e of this.emailAttrs) this.email[e]!.push(names);
      this.derived = r + 1;
      if (tick()) yield;
    }
  }

  truncate(n: number): void {
    if (n >= this.size) return;
    for (const col of this.values) col.truncate(n);
    if (this.derived <= n) return;
    this.tokens.forEach((t, i) => {
      if (t.length > this.values[i]!.distinct) t.length = this.values[i]!.distinct;
    });
    for (const e of this.email) e.truncate(n);
    for (const o of this.insideOwn) if (o.length > n) o.length = n;
    this.names.length = n;
    this.derived = n;
  }

  /** Part i and whole w: both records hold the whole, and each record's part lies inside its whole. */
  private insideBoth(i: number, w: number, a: number, b: number): boolean {
    const rw = this.runtimes[w]!;
    if (!rw.hasValue(a) || !rw.hasValue(b)) return false;
    const own = this.insideOwn[i]!;
    return own[a]! && own[b]!;
  }

  /** Levels of a pair; scores[off + i]: the algorithm's score on attribute i (-1 missing, DEFERRED_SCORE). */
  pairLevels(a: number, b: number, scores: ArrayLike<number>, off: number, out: Int8Array): void {
    this.levelsBeforeAliases(a, b, scores, off, out);
    this.applyAliases(a, b, out, 0);
  }

  /**
   * pairLevels less the domain aliases (applyAliases), which only the estimate finds, over every
   * record: a pair's levels blocked while the sources are still read (early-levels.ts).
   */
  levelsBeforeAliases(a: number, b: number, scores: ArrayLike<number>, off: number, out: Int8Array): void {
    const roles = this.roles!;
    const A = this.comparators.length;
    for (let i = 0; i < A; i++) {
      const col = this.values[i]!;
      const va = col.value(a);
      const vb = col.value(b);
      let score = scores[off + i]!;
      // A part inside its whole on both records: the whole compares it (no score needed).
      const w = roles.partOf[i]!;
      if (w >= 0 && score !== -1 && this.insideBoth(i, w, a, b)) {
        out[i] = this.comparators[i]!.partLevel;
        continue;
      }
      // Equal values are level 0 whatever the score (>= 0: both hold a value); others need it.
      if (score === DEFERRED_SCORE) score = va === vb ? 100 : this.runtimes[i]!.score(a, b);
      const c = this.comparators[i]!;
      if (roles.kinds[i] === 'email') {
        // emailLevel reads the parts only of two different addresses: only those are cut from the values.
        const differ = score >= 0 && va !== '' && vb !== '' && va !== vb;
        const pa = differ ? this.email[i]!.read(a, this.viewA) : this.viewA;
        const pb = differ ? this.email[i]!.read(b, this.viewB) : this.viewB;
        out[i] = c.fromBase(emailLevel(va, vb, score, pa, pb));
      } else if (this.tokenised[i]) {
        out[i] = c.level(va, vb, score, this.names[a]!, this.names[b]!, this.tokensOf(i, a), this.tokensOf(i, b));
      } else {
        out[i] = c.level(va, vb, score, this.names[a]!, this.names[b]!);
      }
    }
    const n = this.nameAttr;
    if (n < 0 || out[n] !== NAME_SURNAME_CHANGED || roles.kinds[n] !== 'name') return;
    // A changed surname the full name already counted: a surname attribute and an address built
    // from the names change with it.
    for (let i = 0; i < A; i++) {
      if (roles.kinds[i] === 'surname' && out[i]! > SURNAME_IMPLIED) out[i] = SURNAME_IMPLIED;
    }
    for (const e of this.emailAttrs) {
      if (out[e]! <= 0) continue;
      const col = this.email[e]!;
      if (col.local(a) !== col.local(b) && col.builtFromNames(a) && col.builtFromNames(b))
        out[e] = EMAIL_FROM_OTHER_NAMES;
    }
  }

  /**
   * One local part at two domains of one organisation: the same mailbox (levels at out[off..]). After
   * the changed surname's rule or before it, the same: that rule reads two different local parts, this
   * one two equal ones.
   */
  applyAliases(a: number, b: number, out: Int8Array, off: number): void {
    if (this.aliases.size === 0) return;
    for (const e of this.emailAttrs) {
      const l = out[off + e];
      if (l !== 1 && l !== 2) continue;
      const col = this.email[e]!;
      if (col.local(a) === col.local(b) && this.aliases.has(aliasKey(col.domainOf(a), col.domainOf(b))))
        out[off + e] = EMAIL_ALIAS_DOMAIN;
    }
  }
}

function sameRoles(a: AttributeRoles, b: AttributeRoles): boolean {
  const same = (x: readonly unknown[], y: readonly unknown[]): boolean =>
    x.length === y.length && x.every((v, i) => v === y[i]);
  return same(a.kinds, b.kinds) && same(a.partOf, b.partOf);
}
