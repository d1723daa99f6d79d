import { SimHttpError } from '../../src/simulator/errors';
import { checkFilterFields, evalFilter, parseFilter, requiredEq } from '../../src/simulator/filter-parser';
import { applyPatch, parsePatch } from '../../src/simulator/json-patch';
import { evalSearch, parseSearchQuery, resolvePath } from '../../src/simulator/search-query';

const rec = { name: 'Ann Lee', sourceId: 's1', n: 5, tags: ['a', 'b'], missing: undefined as string | undefined };
const get = (r: typeof rec, f: string): unknown => (r as Record<string, unknown>)[f];
const f = (src: string): boolean => evalFilter(parseFilter(src), rec, get);

function status400(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SimHttpError);
    expect((e as SimHttpError).status).toBe(400);
    return (e as Error).message;
  }
  throw new Error('expected a 400');
}

describe('filters', () => {
  it('evaluates comparisons, lists and boolean structure', () => {
    expect(f('name eq "Ann Lee"')).toBe(true);
    expect(f('name eq "ann lee"')).toBe(true);
    expect(f('name in ("x", "ANN LEE")')).toBe(true);
    expect(f('sourceId eq "S1"')).toBe(false);
    expect(f('name sw "ann"')).toBe(true);
    expect(f('name co "LEE"')).toBe(true);
    expect(f('sourceId in ("s0","s1")')).toBe(true);
    expect(f('n gt 4 and n le 5')).toBe(true);
    expect(f('name eq "x" or (sourceId eq "s1" and not n eq 6)')).toBe(true);
    expect(f('tags eq "b"')).toBe(true);
    expect(f('missing isnull')).toBe(true);
    expect(f('name pr')).toBe(true);
  });

  it('finds a required equality for index use, and only in conjunctions', () => {
    expect(requiredEq(parseFilter('name eq "x" and sourceId eq "s9"'), 'sourceId')).toBe('s9');
    expect(requiredEq(parseFilter('name eq "x" or sourceId eq "s9"'), 'sourceId')).toBeUndefined();
  });

  it('rejects malformed filters and unsupported fields with clear 400s', () => {
    expect(status400(() => parseFilter('name eq'))).toContain('missing value');
    expect(status400(() => parseFilter('name like "x"'))).toContain('unknown operator');
    expect(status400(() => parseFilter('name eq "x'))).toContain('unterminated');
    expect(status400(() => parseFilter('name eq x'))).toContain('must be quoted');
    expect(status400(() => parseFilter('(name eq "x"'))).toContain('missing ")"');
    expect(status400(() => checkFilterFields(parseFilter('color eq "red"'), { name: ['eq'] }))).toContain(
      'unsupported filter field "color"',
    );
    expect(status400(() => checkFilterFields(parseFilter('name co "x"'), { name: ['eq'] }))).toContain('operator "co"');
  });
});

describe('search queries', () => {
  const doc = {
    id: 'i1',
    name: 'ann.lee',
    displayName: 'Ann Lee',
    email: 'Ann@X.com',
    attributes: { dept: 'Sales' },
    access: [{ id: 'ap1' }, { id: 'ap2' }],
  };
  const s = (q: string): boolean => evalSearch(parseSearchQuery(q), doc, resolvePath);

  it('matches fields, nested paths, wildcards and exact fields', () => {
    expect(s('*')).toBe(true);
    expect(s('name:ann.lee')).toBe(true);
    expect(s('name:ANN.LEE')).toBe(true);
    expect(s('name.exact:"ANN.LEE"')).toBe(false);
    expect(s('attributes.dept:sales')).toBe(true);
    expect(s('access.id:"ap2"')).toBe(true);
    expect(s('email:ann@*')).toBe(true);
    expect(s('email:*')).toBe(true);
    expect(s('"Ann Lee"')).toBe(true);
    expect(s('id:(i0 OR i1)')).toBe(true);
  });

  it('combines with AND, OR, NOT, parentheses and implicit OR', () => {
    expect(s('id:i1 AND attributes.dept:Sales')).toBe(true);
    expect(s('id:i1 AND NOT attributes.dept:Sales')).toBe(false);
    expect(s('id:i0 OR id:i1')).toBe(true);
    expect(s('id:i0 id:i1')).toBe(true);
    expect(s('(id:i0 OR id:i2) AND name:ann.lee')).toBe(false);
    expect(s('id:i1 && !name:bob')).toBe(true);
  });

  it('rejects malformed queries with 400', () => {
    expect(status400(() => parseSearchQuery('name:"open'))).toContain('unterminated');
    expect(status400(() => parseSearchQuery('(id:1'))).toContain('missing ")"');
    expect(status400(() => parseSearchQuery('id:1 AND'))).toContain('unexpected end');
  });
});

describe('JSON Patch', () => {
  it('adds, replaces and removes without touching the original', () => {
    const orig = { a: { b: 1 }, list: [1, 2] };
    const out = applyPatch(
      orig,
      parsePatch([
        { op: 'replace', path: '/a/b', value: 2 },
        { op: 'add', path: '/a/c~1d', value: 'x' },
        { op: 'add', path: '/list/-', value: 3 },
        { op: 'remove', path: '/list/0' },
      ]),
    );
    expect(out).toEqual({ a: { b: 2, 'c/d': 'x' }, list: [2, 3] });
    expect(orig).toEqual({ a: { b: 1 }, list: [1, 2] });
  });

  it('rejects bad patches', () => {
    expect(status400(() => parsePatch({ op: 'replace' }))).toContain('non-empty JSON Patch array');
    expect(status400(() => parsePatch([{ op: 'move', path: '/a' }]))).toContain('unsupported op');
    expect(status400(() => parsePatch([{ op: 'replace', path: 'a', value: 1 }]))).toContain('must start with');
    expect(status400(() => parsePatch([{ op: 'add', path: '/a' }]))).toContain('needs a value');
    expect(status400(() => applyPatch({}, parsePatch([{ op: 'remove', path: '/nope' }])))).toContain('does not exist');
  });
});
