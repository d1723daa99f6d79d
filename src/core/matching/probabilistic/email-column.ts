/**
 * One e-mail attribute's parts (emailParts) for every record, kept as columns: an object per record
 * cost about 110 bytes (the object, its four fields and the local part without digits as a string
 * of its own), the columns about 70, most of it the local part's own string (a domain is one string
 * per tenant domain, the local part without digits is the local part itself unless it holds digits,
 * names-built is one byte).
 */
import { withCapacity } from '../../typed-arrays';
import { type EmailParts, emailParts } from './comparators';

/** Distinct e-mail domains kept as one string each (a tenant's handful; not an attacker's million). */
const MAX_INTERNED_DOMAINS = 10_000;

/** A record's parts as emailLevel reads them, filled in place (a pair is compared without allocating). */
export class EmailView implements EmailParts {
  local = '';
  domain = '';
  fromNames = false;
  localLetters = '';
}

export class EmailColumn {
  private readonly locals: string[] = [];
  private readonly letters: string[] = [];
  private readonly domains: string[] = [];
  private fromNames = new Uint8Array(0);
  private readonly interned: Map<string, string>;

  /** `interned`: domain -> its one string, shared by the columns of one model. */
  constructor(interned: Map<string, string>) {
    this.interned = interned;
  }

  get size(): number {
    return this.locals.length;
  }

  push(value: string, names: readonly string[]): void {
    const p = emailParts(value, names, this.domainOf);
    const r = this.locals.length;
    this.locals.push(p.local);
    this.letters.push(p.localLetters);
    this.domains.push(p.domain);
    this.fromNames = withCapacity(this.fromNames, r + 1, 1024);
    this.fromNames[r] = p.fromNames ? 1 : 0;
  }

  truncate(n: number): void {
    if (this.locals.length <= n) return;
    this.locals.length = n;
    this.letters.length = n;
    this.domains.length = n;
  }

  local(r: number): string {
    return this.locals[r]!;
  }

  domain(r: number): string {
    return this.domains[r]!;
  }

  builtFromNames(r: number): boolean {
    return this.fromNames[r] === 1;
  }

  /** Record r's parts, written into `view`. */
  read(r: number, view: EmailView): EmailView {
    view.local = this.locals[r]!;
    view.domain = this.domains[r]!;
    view.fromNames = this.fromNames[r] === 1;
    view.localLetters = this.letters[r]!;
    return view;
  }

  private readonly domainOf = (domain: string): string => {
    const known = this.interned.get(domain);
    if (known !== undefined) return known;
    if (this.interned.size < MAX_INTERNED_DOMAINS) this.interned.set(domain, domain);
    return domain;
  };
}
