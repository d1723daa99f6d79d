import { objectBody, ok, versioned, type RouteDef, type SimContext, type SimRequest } from '../context';
import { badRequest } from '../errors';
import { compareValues } from '../paging';
import type { IdentityRecord, JsonObject } from '../records';
import { evalSearch, parseSearchQuery, resolvePath } from '../search-query';
import { identityDocument, resolveIdentityField } from '../views';

const MAX_RESULTS = 10_000;

interface SearchBody {
  indices: string[];
  query: string;
  sort: { field: string; desc: boolean }[];
  searchAfter?: unknown[];
  includeNested: boolean;
  includes?: string[];
  excludes?: string[];
}

function readBody(raw: unknown): SearchBody {
  const b = objectBody(raw);
  const indices = b['indices'];
  if (!Array.isArray(indices) || indices.length === 0 || !indices.every((x) => typeof x === 'string')) {
    throw badRequest('indices must be a non-empty array of index names');
  }
  if (b['queryType'] !== undefined && b['queryType'] !== 'SAILPOINT')
    throw badRequest(`queryType ${String(b['queryType'])} is not supported by the simulator`);
  const q = objectBody(b['query'])['query'];
  const sortRaw = b['sort'];
  if (sortRaw !== undefined && (!Array.isArray(sortRaw) || !sortRaw.every((s) => typeof s === 'string')))
    throw badRequest('sort must be an array of field names');
  const sort = ((sortRaw as string[] | undefined) ?? []).map((s) =>
    s.startsWith('-') ? { field: s.slice(1), desc: true } : { field: s.replace(/^\+/, ''), desc: false },
  );
  const searchAfter = b['searchAfter'];
  if (searchAfter !== undefined && !Array.isArray(searchAfter)) throw badRequest('searchAfter must be an array');
  const filter = objectBody(b['queryResultFilter']);
  return {
    indices: indices as string[],
    query: typeof q === 'string' ? q : '*',
    sort,
    searchAfter: searchAfter as unknown[] | undefined,
    includeNested: b['includeNested'] !== false,
    includes: Array.isArray(filter['includes']) ? (filter['includes'] as string[]) : undefined,
    excludes: Array.isArray(filter['excludes']) ? (filter['excludes'] as string[]) : undefined,
  };
}

function intQuery(v: string | undefined, name: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw badRequest(`${name} must be a non-negative integer`);
  return Number(v);
}

function tupleCompare(a: unknown[], b: unknown[], sort: SearchBody['sort']): number {
  for (let k = 0; k < sort.length; k++) {
    const c = compareValues(a[k], b[k]);
    if (c !== 0) return sort[k]?.desc ? -c : c;
  }
  return 0;
}

function project(doc: Record<string, unknown>, body: SearchBody): Record<string, unknown> {
  let out = doc;
  if (!body.includeNested) {
    const { accounts: _a, access: _b, ...rest } = out;
    void _a;
    void _b;
    out = rest;
  }
  if (body.includes)
    out = Object.fromEntries(Object.entries(out).filter(([k]) => k === 'id' || body.includes?.includes(k)));
  if (body.excludes) out = Object.fromEntries(Object.entries(out).filter(([k]) => !body.excludes?.includes(k)));
  return out;
}

/**
 * POST /v3/search (and /v2024/search) over the `identities` and `events` indices: query language in
 * search-query.ts, `sort` + `searchAfter` paging, and the platform's 10,000-result wall for offset paging.
 */
export function searchRoutes(ctx: SimContext): RouteDef[] {
  const { tenant } = ctx;

  const identities = (body: SearchBody): { rec: IdentityRecord; key: unknown[] }[] => {
    const v = tenant.versions;
    const cacheKey = `ident|${body.query}|${JSON.stringify(body.sort)}|${v.accounts}.${v.accessProfiles}`;
    return ctx.cache.get(cacheKey, v.identities, () => {
      const expr = parseSearchQuery(body.query);
      const out: { rec: IdentityRecord; key: unknown[] }[] = [];
      for (const i of tenant.identities.values()) {
        if (evalSearch(expr, i, (rec, path) => resolveIdentityField(tenant, rec, path))) {
          out.push({ rec: i, key: body.sort.map((s) => resolveIdentityField(tenant, i, s.field)[0]) });
        }
      }
      if (body.sort.length) out.sort((x, y) => tupleCompare(x.key, y.key, body.sort));
      return out;
    });
  };

  const events = (body: SearchBody): { rec: JsonObject; key: unknown[] }[] => {
    const expr = parseSearchQuery(body.query);
    const out = tenant.events
      .filter((e) => evalSearch(expr, e, resolvePath))
      .map((e) => ({ rec: e, key: body.sort.map((s) => resolvePath(e, s.field)[0]) }));
    if (body.sort.length) out.sort((x, y) => tupleCompare(x.key, y.key, body.sort));
    return out;
  };

  const page = (req: SimRequest): number | undefined => {
    const b = objectBody(req.body);
    const sa = b['searchAfter'];
    if (Array.isArray(sa)) return ctx.cursors.pageOf(sa);
    const limit = Number(req.query['limit'] ?? MAX_RESULTS) || MAX_RESULTS;
    return Math.floor((Number(req.query['offset'] ?? 0) || 0) / limit) + 1;
  };

  return versioned(['v3', 'v2024'], {
    method: 'POST',
    path: '/search',
    scope: 'search',
    page,
    handler: (req) => {
      const body = readBody(req.body);
      const limit = intQuery(req.query['limit'], 'limit', MAX_RESULTS);
      const offset = intQuery(req.query['offset'], 'offset', 0);
      if (limit < 1 || limit > MAX_RESULTS) throw badRequest(`limit must be between 1 and ${MAX_RESULTS}`);
      if (body.searchAfter && body.sort.length === 0) throw badRequest('searchAfter requires sort');
      if (body.searchAfter && body.searchAfter.length !== body.sort.length)
        throw badRequest('searchAfter must have one value per sort field');
      if (!body.searchAfter && offset + limit > MAX_RESULTS) {
        throw badRequest(`offset + limit must not exceed ${MAX_RESULTS}; use searchAfter to page deeper`);
      }
      const index = body.indices[0];
      let matched: { rec: unknown; key: unknown[] }[];
      if (index === 'identities') matched = identities(body);
      else if (index === 'events') matched = events(body);
      else matched = [];
      let start = offset;
      if (body.searchAfter) {
        const after = body.searchAfter;
        let lo = 0;
        let hi = matched.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (tupleCompare((matched[mid] as { key: unknown[] }).key, after, body.sort) <= 0) lo = mid + 1;
          else hi = mid;
        }
        start = lo;
      }
      const slice = matched.slice(start, start + limit);
      const last = slice[slice.length - 1];
      if (last && body.sort.length) {
        const current = body.searchAfter ? ctx.cursors.pageOf(body.searchAfter) : Math.floor(offset / limit) + 1;
        if (current !== undefined) ctx.cursors.remember(last.key, current + 1);
      }
      const docs = slice.map((m) =>
        index === 'identities'
          ? project(identityDocument(m.rec as IdentityRecord, tenant), body)
          : { ...(m.rec as JsonObject), _type: 'event' },
      );
      return ok(docs, 200, req.query['count'] === 'true' ? { 'x-total-count': String(matched.length) } : undefined);
    },
  });
}
