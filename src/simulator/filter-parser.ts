import { badRequest } from './errors';

/**
 * The platform's `filters` query language, the subset list endpoints need:
 * `field op value` with eq, ne, in, sw, co, gt, ge, lt, le (values: "string", number, true, false, null,
 * or a parenthesised list for `in`), unary `pr` / `isnull`, combined with `and`, `or`, `not` and parentheses.
 * `eq`/`ne`/`in` compare exactly, except on `name` fields where, like the platform, they ignore case
 * (so a connector that needs exact names must check them itself); `sw`/`co` always ignore case.
 */
export type FilterValue = string | number | boolean | null;
export type FilterOp = 'eq' | 'ne' | 'in' | 'sw' | 'co' | 'gt' | 'ge' | 'lt' | 'le' | 'pr' | 'isnull';

export type FilterExpr =
  | { kind: 'and' | 'or'; left: FilterExpr; right: FilterExpr }
  | { kind: 'not'; expr: FilterExpr }
  | { kind: 'cmp'; field: string; op: FilterOp; value?: FilterValue | FilterValue[] };

const BINARY_OPS = new Set(['eq', 'ne', 'in', 'sw', 'co', 'gt', 'ge', 'lt', 'le']);
const UNARY_OPS = new Set(['pr', 'isnull']);

type Token = { t: 'word' | 'string' | 'lp' | 'rp' | 'comma'; v: string };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
    } else if (c === '(') {
      out.push({ t: 'lp', v: c });
      i++;
    } else if (c === ')') {
      out.push({ t: 'rp', v: c });
      i++;
    } else if (c === ',') {
      out.push({ t: 'comma', v: c });
      i++;
    } else if (c === '"') {
      let s = '';
      i++;
      while (i < src.length && src[i] !== '"') {
        if (src[i] === '\\' && i + 1 < src.length) i++;
        s += src[i];
        i++;
      }
      if (i >= src.length) throw badRequest(`Invalid filter: unterminated string in "${src}"`);
      i++;
      out.push({ t: 'string', v: s });
    } else {
      let s = '';
      while (i < src.length && !' \t\n(),"'.includes(src[i] as string)) s += src[i++];
      out.push({ t: 'word', v: s });
    }
  }
  return out;
}

export function parseFilter(src: string): FilterExpr {
  const tokens = tokenize(src);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const fail = (why: string): never => {
    throw badRequest(`Invalid filter "${src}": ${why}`);
  };
  const value = (): FilterValue => {
    const tok = tokens[pos++];
    if (!tok) return fail('missing value');
    if (tok.t === 'string') return tok.v;
    if (tok.t !== 'word') return fail(`unexpected "${tok.v}"`);
    if (tok.v === 'true') return true;
    if (tok.v === 'false') return false;
    if (tok.v === 'null') return null;
    const n = Number(tok.v);
    if (tok.v !== '' && Number.isFinite(n)) return n;
    return fail(`value ${tok.v} must be quoted`);
  };
  const primary = (): FilterExpr => {
    const tok = peek();
    if (!tok) return fail('unexpected end');
    if (tok.t === 'lp') {
      pos++;
      const e = orExpr();
      if (peek()?.t !== 'rp') fail('missing ")"');
      pos++;
      return e;
    }
    if (tok.t === 'word' && tok.v.toLowerCase() === 'not') {
      pos++;
      return { kind: 'not', expr: primary() };
    }
    if (tok.t !== 'word') return fail(`unexpected "${tok.v}"`);
    pos++;
    const opTok = tokens[pos++];
    const op = opTok?.t === 'word' ? opTok.v.toLowerCase() : '';
    if (UNARY_OPS.has(op)) return { kind: 'cmp', field: tok.v, op: op as FilterOp };
    if (!BINARY_OPS.has(op)) return fail(`unknown operator "${opTok?.v ?? ''}" after ${tok.v}`);
    if (op === 'in') {
      if (peek()?.t !== 'lp') fail('"in" needs a list in parentheses');
      pos++;
      const list: FilterValue[] = [value()];
      while (peek()?.t === 'comma') {
        pos++;
        list.push(value());
      }
      if (peek()?.t !== 'rp') fail('missing ")" after list');
      pos++;
      return { kind: 'cmp', field: tok.v, op: 'in', value: list };
    }
    return { kind: 'cmp', field: tok.v, op: op as FilterOp, value: value() };
  };
  const andExpr = (): FilterExpr => {
    let left = primary();
    while (peek()?.t === 'word' && peek()?.v.toLowerCase() === 'and') {
      pos++;
      left = { kind: 'and', left, right: primary() };
    }
    return left;
  };
  function orExpr(): FilterExpr {
    let left = andExpr();
    while (peek()?.t === 'word' && peek()?.v.toLowerCase() === 'or') {
      pos++;
      left = { kind: 'or', left, right: andExpr() };
    }
    return left;
  }
  const expr = orExpr();
  if (pos < tokens.length) fail(`unexpected "${tokens[pos]?.v ?? ''}"`);
  return expr;
}

/** Rejects fields or operators an endpoint does not support, with a 400 like the platform. */
export function checkFilterFields(expr: FilterExpr, allowed: Record<string, readonly FilterOp[]>): void {
  if (expr.kind === 'and' || expr.kind === 'or') {
    checkFilterFields(expr.left, allowed);
    checkFilterFields(expr.right, allowed);
  } else if (expr.kind === 'not') {
    checkFilterFields(expr.expr, allowed);
  } else if (expr.kind === 'cmp') {
    const ops = allowed[expr.field];
    if (!ops) throw badRequest(`Invalid filter: unsupported filter field "${expr.field}"`);
    if (!ops.includes(expr.op))
      throw badRequest(`Invalid filter: operator "${expr.op}" is not supported for "${expr.field}"`);
  }
}

const CASE_INSENSITIVE_FIELDS: ReadonlySet<string> = new Set(['name']);

function fold(v: unknown): unknown {
  return typeof v === 'string' ? v.toLowerCase() : v;
}

function compareCmp(
  actual: unknown,
  op: FilterOp,
  value: FilterValue | FilterValue[] | undefined,
  ci = false,
): boolean {
  if (ci && (op === 'eq' || op === 'ne' || op === 'in')) {
    return compareCmp(
      Array.isArray(actual) ? actual.map(fold) : fold(actual),
      op,
      Array.isArray(value) ? (value.map(fold) as FilterValue[]) : (fold(value) as FilterValue),
      false,
    );
  }
  if (op === 'pr') return actual !== undefined && actual !== null && actual !== '';
  if (op === 'isnull') return actual === undefined || actual === null;
  if (Array.isArray(actual)) return actual.some((a) => compareCmp(a, op, value));
  switch (op) {
    case 'eq':
      return actual === value || (actual === undefined && value === null);
    case 'ne':
      return actual !== value;
    case 'in':
      return Array.isArray(value) && value.some((v) => v === actual);
    case 'sw':
      return (
        typeof actual === 'string' && typeof value === 'string' && actual.toLowerCase().startsWith(value.toLowerCase())
      );
    case 'co':
      return (
        typeof actual === 'string' && typeof value === 'string' && actual.toLowerCase().includes(value.toLowerCase())
      );
    default: {
      if (actual === undefined || actual === null || value === null || value === undefined || Array.isArray(value))
        return false;
      const a = actual as string | number;
      const v = value as string | number;
      if (op === 'gt') return a > v;
      if (op === 'ge') return a >= v;
      if (op === 'lt') return a < v;
      return a <= v;
    }
  }
}

export function evalFilter<T>(expr: FilterExpr, rec: T, get: (rec: T, field: string) => unknown): boolean {
  switch (expr.kind) {
    case 'and':
      return evalFilter(expr.left, rec, get) && evalFilter(expr.right, rec, get);
    case 'or':
      return evalFilter(expr.left, rec, get) || evalFilter(expr.right, rec, get);
    case 'not':
      return !evalFilter(expr.expr, rec, get);
    default:
      return compareCmp(get(rec, expr.field), expr.op, expr.value, CASE_INSENSITIVE_FIELDS.has(expr.field));
  }
}

/** The value of `field eq "v"` when it is a required conjunct, so a store can use an index. */
export function requiredEq(expr: FilterExpr, field: string): string | undefined {
  if (expr.kind === 'cmp')
    return expr.field === field && expr.op === 'eq' && typeof expr.value === 'string' ? expr.value : undefined;
  if (expr.kind === 'and') return requiredEq(expr.left, field) ?? requiredEq(expr.right, field);
  return undefined;
}
