/**
 * The "Account filter" setting: an expression that selects the source accounts to process;
 * accounts it does not select are excluded. It is evaluated locally on every listed account
 * (the platform's account-list filter language only reaches a few fixed fields, never the
 * account's attributes), with a syntax close to that language:
 *
 *   attributes.department eq "IT" and not (name sw "svc-" or attributes.type in ("bot", "test"))
 *
 * Fields: id, name, nativeIdentity, identityId, disabled, sourceName, attributes.<name>
 * (case-sensitive). Operators: eq ne co sw ew gt ge lt le in pr. Multi-valued attributes match
 * when any value matches.
 */
import { FusionError } from '../errors';

export interface FilterableAccount {
  id: string;
  name: string;
  nativeIdentity: string;
  identityId?: string;
  disabled: boolean;
  sourceName: string;
  attributes: Record<string, unknown>;
}

export type AccountPredicate = (account: FilterableAccount) => boolean;

type Literal = string | number | boolean | null;
type Node =
  | { kind: 'and' | 'or'; left: Node; right: Node }
  | { kind: 'not'; inner: Node }
  | { kind: 'cmp'; field: string; op: string; value: Literal | Literal[] };

const OPS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'in', 'pr']);
const FIELDS = new Set(['id', 'name', 'nativeIdentity', 'identityId', 'disabled', 'sourceName']);

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      tokens.push(c);
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\' && j + 1 < text.length) j++;
        s += text[j];
        j++;
      }
      if (j >= text.length) throw new Error(`unterminated string starting at position ${i + 1}`);
      tokens.push(JSON.stringify(s));
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !/[\s(),"]/.test(text[j] as string)) j++;
      tokens.push(text.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: string[]) {}

  parse(): Node {
    const node = this.or();
    if (this.pos < this.tokens.length) throw new Error(`unexpected "${this.tokens[this.pos]}"`);
    return node;
  }

  private peek(): string | undefined {
    return this.tokens[this.pos];
  }

  private next(what: string): string {
    const t = this.tokens[this.pos++];
    if (t === undefined) throw new Error(`expected ${what} at the end`);
    return t;
  }

  private or(): Node {
    let left = this.and();
    while (this.peek()?.toLowerCase() === 'or') {
      this.pos++;
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Node {
    let left = this.unary();
    while (this.peek()?.toLowerCase() === 'and') {
      this.pos++;
      left = { kind: 'and', left, right: this.unary() };
    }
    return left;
  }

  private unary(): Node {
    const t = this.peek();
    if (t?.toLowerCase() === 'not') {
      this.pos++;
      return { kind: 'not', inner: this.unary() };
    }
    if (t === '(') {
      this.pos++;
      const inner = this.or();
      if (this.next('")"') !== ')') throw new Error('expected ")"');
      return inner;
    }
    return this.comparison();
  }

  private comparison(): Node {
    const field = this.next('a field');
    if (!FIELDS.has(field) && !/^attributes\.[^\s]+$/.test(field)) {
      throw new Error(`unknown field "${field}" (use ${[...FIELDS].join(', ')} or attributes.<name>)`);
    }
    const op = this.next('an operator').toLowerCase();
    if (!OPS.has(op)) throw new Error(`unknown operator "${op}" (use ${[...OPS].join(', ')})`);
    if (op === 'pr') return { kind: 'cmp', field, op, value: null };
    if (op === 'in') {
      if (this.next('"("') !== '(') throw new Error('expected "(" after in');
      const values: Literal[] = [this.literal()];
      while (this.peek() === ',') {
        this.pos++;
        values.push(this.literal());
      }
      if (this.next('")"') !== ')') throw new Error('expected ")" after the in list');
      return { kind: 'cmp', field, op, value: values };
    }
    return { kind: 'cmp', field, op, value: this.literal() };
  }

  private literal(): Literal {
    const t = this.next('a value');
    if (t.startsWith('"')) return JSON.parse(t) as string;
    if (t === 'true') return true;
    if (t === 'false') return false;
    if (t === 'null') return null;
    if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    throw new Error(`expected a quoted string, number, true, false or null, got "${t}"`);
  }
}

function fieldValues(account: FilterableAccount, field: string): unknown[] {
  const v = field.startsWith('attributes.')
    ? account.attributes[field.slice('attributes.'.length)]
    : (account as unknown as Record<string, unknown>)[field];
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function compare(actual: unknown, op: string, expected: Literal): boolean {
  if (expected === null) return op === 'ne';
  if (typeof expected === 'number' && ['gt', 'ge', 'lt', 'le', 'eq', 'ne'].includes(op)) {
    const n = typeof actual === 'number' ? actual : Number(actual);
    if (Number.isNaN(n)) return op === 'ne';
    return op === 'gt'
      ? n > expected
      : op === 'ge'
        ? n >= expected
        : op === 'lt'
          ? n < expected
          : op === 'le'
            ? n <= expected
            : op === 'eq'
              ? n === expected
              : n !== expected;
  }
  const a = String(actual);
  const e = String(expected);
  switch (op) {
    case 'eq':
      return a === e;
    case 'ne':
      return a !== e;
    case 'co':
      return a.includes(e);
    case 'sw':
      return a.startsWith(e);
    case 'ew':
      return a.endsWith(e);
    case 'gt':
      return a > e;
    case 'ge':
      return a >= e;
    case 'lt':
      return a < e;
    default:
      return a <= e;
  }
}

function evaluate(node: Node, account: FilterableAccount): boolean {
  switch (node.kind) {
    case 'and':
      return evaluate(node.left, account) && evaluate(node.right, account);
    case 'or':
      return evaluate(node.left, account) || evaluate(node.right, account);
    case 'not':
      return !evaluate(node.inner, account);
    default: {
      const values = fieldValues(account, node.field);
      if (node.op === 'pr') return values.some((v) => v !== '');
      if (node.op === 'in') return values.some((v) => (node.value as Literal[]).some((e) => compare(v, 'eq', e)));
      if (node.op === 'ne') return values.every((v) => compare(v, 'ne', node.value as Literal));
      return values.some((v) => compare(v, node.op, node.value as Literal));
    }
  }
}

/** Parses a filter; throws a plain Error with the reason (the config parser turns it into CONFIG_INVALID). */
export function parseAccountFilterOrThrow(text: string): AccountPredicate {
  const tree = new Parser(tokenize(text)).parse();
  return (account) => evaluate(tree, account);
}

/** An empty filter selects every account. */
export function compileAccountFilter(text: string, field = 'accountFilter'): AccountPredicate {
  if (text.trim() === '') return () => true;
  try {
    return parseAccountFilterOrThrow(text);
  } catch (e) {
    throw new FusionError(
      'CONFIG_INVALID',
      `Invalid configuration: ${field} = ${JSON.stringify(text)}: ${(e as Error).message}`,
      { field },
    );
  }
}
