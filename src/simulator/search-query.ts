import { badRequest } from './errors';

/**
 * The search query language (the `query.query` of POST /v3/search), a Lucene subset:
 * - `*` matches everything;
 * - `field:value`, `field:"quoted value"`, `field:(v1 OR v2)`; `*` inside an unquoted value is a wildcard;
 * - a field ending in `.exact` compares case-sensitively, other fields ignore case;
 * - a bare value (no field) matches name, displayName, firstName, lastName or email;
 * - AND, OR, NOT (also &&, ||, !), parentheses; terms written side by side are ORed (Lucene default).
 * Fields are dotted paths resolved by the index (e.g. `attributes.department`, `access.id`, `accounts.source.id`).
 */
export type SearchExpr =
  | { kind: 'all' }
  | { kind: 'and' | 'or'; left: SearchExpr; right: SearchExpr }
  | { kind: 'not'; expr: SearchExpr }
  | { kind: 'term'; field?: string; values: string[]; exact: boolean; quoted: boolean[] };

type Tok = { t: 'lp' | 'rp' | 'and' | 'or' | 'not' | 'term'; field?: string; values?: string[]; quoted?: boolean[] };

function readValue(src: string, i: number): { v: string; quoted: boolean; end: number } {
  if (src[i] === '"') {
    let s = '';
    let j = i + 1;
    while (j < src.length && src[j] !== '"') {
      if (src[j] === '\\' && j + 1 < src.length) j++;
      s += src[j];
      j++;
    }
    if (j >= src.length) throw badRequest(`Invalid query: unterminated quote in "${src}"`);
    return { v: s, quoted: true, end: j + 1 };
  }
  let s = '';
  let j = i;
  while (j < src.length && !' \t\n()'.includes(src[j] as string)) {
    if (src[j] === '\\' && j + 1 < src.length) j++;
    s += src[j];
    j++;
  }
  return { v: s, quoted: false, end: j };
}

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (' \t\n'.includes(c)) {
      i++;
      continue;
    }
    if (c === '(') {
      out.push({ t: 'lp' });
      i++;
      continue;
    }
    if (c === ')') {
      out.push({ t: 'rp' });
      i++;
      continue;
    }
    if (src.startsWith('&&', i)) {
      out.push({ t: 'and' });
      i += 2;
      continue;
    }
    if (src.startsWith('||', i)) {
      out.push({ t: 'or' });
      i += 2;
      continue;
    }
    if (c === '!') {
      out.push({ t: 'not' });
      i++;
      continue;
    }
    // field name: up to ':' if one comes before any separator
    const m = /^([A-Za-z_@][\w.@-]*):/.exec(src.slice(i));
    if (m) {
      const field = m[1] as string;
      i += m[0].length;
      if (src[i] === '(') {
        const values: string[] = [];
        const quoted: boolean[] = [];
        i++;
        for (;;) {
          while (src[i] === ' ') i++;
          if (i >= src.length) throw badRequest(`Invalid query: missing ")" in "${src}"`);
          if (src[i] === ')') {
            i++;
            break;
          }
          const r = readValue(src, i);
          i = r.end;
          if (!r.quoted && (r.v === 'OR' || r.v === '||')) continue;
          values.push(r.v);
          quoted.push(r.quoted);
        }
        out.push({ t: 'term', field, values, quoted });
      } else {
        const r = readValue(src, i);
        if (r.v === '' && !r.quoted) throw badRequest(`Invalid query: missing value for "${field}"`);
        i = r.end;
        out.push({ t: 'term', field, values: [r.v], quoted: [r.quoted] });
      }
      continue;
    }
    const r = readValue(src, i);
    i = r.end;
    if (!r.quoted && (r.v === 'AND' || r.v === 'OR' || r.v === 'NOT'))
      out.push({ t: r.v.toLowerCase() as 'and' | 'or' | 'not' });
    else out.push({ t: 'term', values: [r.v], quoted: [r.quoted] });
  }
  return out;
}

export function parseSearchQuery(src: string): SearchExpr {
  const trimmed = src.trim();
  if (trimmed === '' || trimmed === '*') return { kind: 'all' };
  const toks = tokenize(trimmed);
  let pos = 0;
  const fail = (why: string): never => {
    throw badRequest(`Invalid query "${src}": ${why}`);
  };
  const primary = (): SearchExpr => {
    const tok = toks[pos++];
    if (!tok) return fail('unexpected end');
    if (tok.t === 'lp') {
      const e = orExpr();
      if (toks[pos]?.t !== 'rp') fail('missing ")"');
      pos++;
      return e;
    }
    if (tok.t === 'not') return { kind: 'not', expr: primary() };
    if (tok.t !== 'term') return fail(`unexpected ${tok.t.toUpperCase()}`);
    const values = tok.values ?? [];
    if (!tok.field && values.length === 1 && values[0] === '*' && !tok.quoted?.[0]) return { kind: 'all' };
    let field = tok.field;
    let exact = false;
    if (field?.endsWith('.exact')) {
      field = field.slice(0, -'.exact'.length);
      exact = true;
    }
    return { kind: 'term', field, values, exact, quoted: tok.quoted ?? [] };
  };
  const andExpr = (): SearchExpr => {
    let left = primary();
    for (;;) {
      const t = toks[pos];
      if (t?.t === 'and') {
        pos++;
        left = { kind: 'and', left, right: primary() };
      } else if (t && (t.t === 'term' || t.t === 'lp' || t.t === 'not')) {
        left = { kind: 'or', left, right: primary() };
      } else return left;
    }
  };
  function orExpr(): SearchExpr {
    let left = andExpr();
    while (toks[pos]?.t === 'or') {
      pos++;
      left = { kind: 'or', left, right: andExpr() };
    }
    return left;
  }
  const e = orExpr();
  if (pos < toks.length) fail('unexpected ")"');
  return e;
}

const BARE_FIELDS = ['name', 'displayName', 'firstName', 'lastName', 'email'];

function wildcardRegex(pattern: string, exact: boolean): RegExp {
  const body = pattern
    .split('*')
    .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, exact ? '' : 'i');
}

function matchValue(actual: unknown, value: string, exact: boolean, quoted: boolean): boolean {
  if (actual === undefined || actual === null) return false;
  const a = typeof actual === 'string' ? actual : String(actual);
  if (!quoted && value.includes('*')) return wildcardRegex(value, exact).test(a);
  return exact ? a === value : a.toLowerCase() === value.toLowerCase();
}

/** `resolve(doc, path)` returns every value at a dotted path (arrays flattened). */
export function evalSearch<T>(expr: SearchExpr, doc: T, resolve: (doc: T, path: string) => unknown[]): boolean {
  switch (expr.kind) {
    case 'all':
      return true;
    case 'and':
      return evalSearch(expr.left, doc, resolve) && evalSearch(expr.right, doc, resolve);
    case 'or':
      return evalSearch(expr.left, doc, resolve) || evalSearch(expr.right, doc, resolve);
    case 'not':
      return !evalSearch(expr.expr, doc, resolve);
    default: {
      const fields = expr.field ? [expr.field] : BARE_FIELDS;
      for (const f of fields) {
        const actuals = resolve(doc, f);
        for (let k = 0; k < expr.values.length; k++) {
          const v = expr.values[k] as string;
          const q = expr.quoted[k] ?? false;
          if (!q && v === '*' && actuals.some((a) => a !== undefined && a !== null)) return true;
          if (actuals.some((a) => matchValue(a, v, expr.exact, q))) return true;
        }
      }
      return false;
    }
  }
}

/** Generic dotted-path resolution over plain objects, flattening arrays at every step. */
export function resolvePath(doc: unknown, path: string): unknown[] {
  let cur: unknown[] = [doc];
  for (const part of path.split('.')) {
    const next: unknown[] = [];
    for (const c of cur) {
      if (c === null || c === undefined || typeof c !== 'object') continue;
      const v = (c as Record<string, unknown>)[part];
      if (Array.isArray(v)) next.push(...v);
      else if (v !== undefined) next.push(v);
    }
    cur = next;
  }
  return cur;
}
