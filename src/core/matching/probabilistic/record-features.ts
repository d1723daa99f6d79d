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
import { type AttributeRoles, namesAttribute, recordNames } from './attribute-roles';
import {
  type Comparator,
  EMAIL_ALIAS_DOMAIN,
  EMAIL_FROM_OTHER_NAMES,
  type EmailParts,
  NAME_SURNAME_CHANGED,
  SURNAME_IMPLIED,
  comparatorOfKind,
  emailLevel,
  emailParts,
  partComparator,
} from './comparators';
import { aliasKey } from './domain-aliases';
import { drain, type Steps, ticker } from '../steps';

/** Records derived between two yields (a few milliseconds). */
const DERIVE_STEP = 4096;

/** Distinct e-mail domains kept as one string each. */
const MAX_INTERNED_DOMAINS = 10_000;

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

const NO_TOKENS: string[] = [];

export class RecordFeatures {
  /** First normalised value per attribute and record ('' missing). */
  readonly values: string[][];
  /** Value -> records holding it, per attribute (term frequencies). */
  readonly freq: Map<string, number>[];
  roles: AttributeRoles | undefined;
  comparators: Comparator[] = [];
  /** Per attribute: keeps name tokens (a whole name, its parts, names and surnames). */
  private tokenised: boolean[] = [];
  private tokens: string[][][] = [];
  /** Per record: its names (for addresses and logins built from them). */
  private names: string[][] = [];
  /** Per attribute compared as an e-mail: each record's address split and compared with its names. */
  private email: EmailParts[][] = [];
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
    this.values = runtimes.map(() => []);
    this.freq = runtimes.map(() => new Map());
  }

  get size(): number {
    return this.values[0]?.length ?? 0;
  }

  /** Sets the roles (comparators, what is derived per record) and derives every record held. */
  setRoles(roles: AttributeRoles): void {
    drain(this.setRolesSteps(roles));
  }

  /** setRoles in steps (steps.ts): every record held is derived, 200k of them at 100k x 100k. */
  *setRolesSteps(roles: AttributeRoles): Steps<void> {
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
    this.email = this.runtimes.map(() => []);
    this.insideOwn = this.runtimes.map(() => []);
    this.derived = 0;
    yield* this.derive();
  }

  append(records: readonly MatchRecord[]): void {
    const base = this.size;
    records.forEach((rec, k) => {
      this.runtimes.forEach((rt, i) => {
        let v = attributeValues(rec.attributes[rt.rule.attribute])[0] ?? '';
        const prepared = v === '' ? undefined : rt.first(base + k);
        if (prepared === v) v = prepared;
        this.values[i]!.push(v);
        if (v !== '') this.freq[i]!.set(v, (this.freq[i]!.get(v) ?? 0) + 1);
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
        const v = this.values[i]![r]!;
        this.tokens[i]!.push(v === '' ? NO_TOKENS : sharedTokens(nameTokens(v), rt.first(r)));
      });
      for (let i = 0; i < roles.partOf.length; i++) {
        const w = roles.partOf[i]!;
        if (w >= 0) this.insideOwn[i]!.push(inside(this.tokens[i]![r]!, this.tokens[w]![r]!));
      }
      const names = recordNames(roles, this.tokens, r);
      this.names.push(names);
      for (const e of this.emailAttrs) this.email[e]!.push(emailParts(this.values[e]![r]!, names, this.domainOf));
      this.derived = r + 1;
      if (tick()) yield;
    }
  }

  /** One string per e-mail domain, while there are few (a tenant's handful; not an attacker's million). */
  private readonly domains = new Map<string, string>();
  private readonly domainOf = (domain: string): string => {
    const known = this.domains.get(domain);
    if (known !== undefined) return known;
    if (this.domains.size < MAX_INTERNED_DOMAINS) this.domains.set(domain, domain);
    return domain;
  };

  truncate(n: number): void {
    if (n >= this.size) return;
    this.values.forEach((col, i) => {
      for (let r = n; r < col.length; r++) {
        const v = col[r]!;
        if (v === '') continue;
        const c = this.freq[i]!.get(v)! - 1;
        if (c === 0) this.freq[i]!.delete(v);
        else this.freq[i]!.set(v, c);
      }
      col.length = n;
    });
    if (this.derived <= n) return;
    for (const t of this.tokens) if (t.length > n) t.length = n;
    for (const e of this.email) if (e.length > n) e.length = n;
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
    const roles = this.roles!;
    const A = this.comparators.length;
    for (let i = 0; i < A; i++) {
      const v = this.values[i]!;
      let score = scores[off + i]!;
      // A part inside its whole on both records: the whole compares it (no score needed).
      const w = roles.partOf[i]!;
      if (w >= 0 && score !== -1 && this.insideBoth(i, w, a, b)) {
        out[i] = this.comparators[i]!.partLevel;
        continue;
      }
      // Equal values are level 0 whatever the score (>= 0: both hold a value); others need it.
      if (score === DEFERRED_SCORE) score = v[a] === v[b] ? 100 : this.runtimes[i]!.score(a, b);
      const c = this.comparators[i]!;
      const t = this.tokens[i]!;
      out[i] =
        roles.kinds[i] === 'email'
          ? c.fromBase(emailLevel(v[a]!, v[b]!, score, this.email[i]![a]!, this.email[i]![b]!))
          : c.level(v[a]!, v[b]!, score, this.names[a]!, this.names[b]!, t[a], t[b]);
    }
    for (const e of this.emailAttrs) {
      // One local part at two domains of one organisation: the same mailbox.
      if ((out[e] === 1 || out[e] === 2) && this.aliases.size > 0) {
        const pa = this.email[e]![a]!;
        const pb = this.email[e]![b]!;
        if (pa.local === pb.local && this.aliases.has(aliasKey(pa.domain, pb.domain))) out[e] = EMAIL_ALIAS_DOMAIN;
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
      const pa = this.email[e]![a]!;
      const pb = this.email[e]![b]!;
      if (pa.local !== pb.local && pa.fromNames && pb.fromNames) out[e] = EMAIL_FROM_OTHER_NAMES;
    }
  }
}

function inside(part: readonly string[], whole: readonly string[]): boolean {
  if (part.length === 0) return false;
  for (const t of part) if (!whole.includes(t)) return false;
  return true;
}
