/**
 * One e-mail attribute's parts (emailParts) for every record, kept as columns beside its values: an
 * object per record cost about 110 bytes (the object, its four fields, the local part as a string of
 * its own and the local part without digits as another), the columns 9 (where the local part ends,
 * the domain's number, two flags). A pair's parts are read back only when its addresses differ (the
 * local part is cut from the value then, a few times per account), so the model's memory at 1M
 * identities no longer holds two strings per record and e-mail attribute.
 */
import { withCapacity } from '../../typed-arrays';
import { type EmailParts, emailParts } from './comparators';
import type { ValueColumn } from './value-column';

const FROM_NAMES = 1;
const HAS_DIGITS = 2;
const NEAR_NAMES = 4;
const DIGITS = /[0-9]/g;

/** A record's parts as emailLevel reads them, filled in place (a pair is compared without allocating objects). */
export class EmailView implements EmailParts {
  local = '';
  domain = '';
  fromNames = false;
  localLetters = '';
  nearNames = false;
}

/**
 * The domains of a model's addresses, numbered (0: none). A tenant has a handful; values with a
 * domain each (hostile data) cost about twice what a string per record did, held once per domain.
 */
export class DomainNumbers {
  private readonly numbers = new Map<string, number>([['', 0]]);
  private readonly names: string[] = [''];

  numberOf(domain: string): number {
    let n = this.numbers.get(domain);
    if (n === undefined) {
      n = this.names.length;
      this.numbers.set(domain, n);
      this.names.push(domain);
    }
    return n;
  }

  name(n: number): string {
    return this.names[n]!;
  }
}

export class EmailColumn {
  /** Per record: where its local part ends in its value (the value's length when it has no @). */
  private localEnd = new Int32Array(0);
  private domain = new Int32Array(0);
  private flags = new Uint8Array(0);
  private rows = 0;

  /** `values`: the attribute's values (the record's address is its value). */
  constructor(
    private readonly values: ValueColumn,
    private readonly domains: DomainNumbers,
  ) {}

  /** Appends the next record's parts (its value is in `values`; `names`: its names). */
  push(names: readonly string[]): void {
    const r = this.rows;
    const v = this.values.value(r);
    const p = emailParts(v, names);
    this.localEnd = withCapacity(this.localEnd, r + 1, 1024);
    this.domain = withCapacity(this.domain, r + 1, 1024);
    this.flags = withCapacity(this.flags, r + 1, 1024);
    this.localEnd[r] = p.local.length;
    this.domain[r] = this.domains.numberOf(p.domain);
    this.flags[r] =
      (p.fromNames ? FROM_NAMES : 0) | (p.localLetters !== p.local ? HAS_DIGITS : 0) | (p.nearNames ? NEAR_NAMES : 0);
    this.rows = r + 1;
  }

  truncate(n: number): void {
    if (n < this.rows) this.rows = n;
  }

  /** Record r's local part. */
  local(r: number): string {
    const v = this.values.value(r);
    const end = this.localEnd[r]!;
    return end === v.length ? v : v.slice(0, end);
  }

  domainOf(r: number): string {
    return this.domains.name(this.domain[r]!);
  }

  builtFromNames(r: number): boolean {
    return (this.flags[r]! & FROM_NAMES) !== 0;
  }

  /** Record r's parts, written into `view`. */
  read(r: number, view: EmailView): EmailView {
    const local = this.local(r);
    const flags = this.flags[r]!;
    view.local = local;
    view.domain = this.domainOf(r);
    view.fromNames = (flags & FROM_NAMES) !== 0;
    view.nearNames = (flags & NEAR_NAMES) !== 0;
    view.localLetters = (flags & HAS_DIGITS) !== 0 ? local.replace(DIGITS, '') : local;
    return view;
  }
}
