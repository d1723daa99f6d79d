import { API_VERSIONS, ok, versioned, type RouteDef, type SimContext } from '../context';
import { checkFilterFields, evalFilter, parseFilter, type FilterOp } from '../filter-parser';
import { applyPatch, parsePatch } from '../json-patch';
import { listParams, pageOfQuery, parseSorters, sortBy } from '../paging';
import type { SourceRecord } from '../records';
import { schemaView, sourceView } from '../views';
import { badRequest } from '../errors';

const FILTERS: Record<string, readonly FilterOp[]> = {
  id: ['eq', 'in'],
  name: ['eq', 'in', 'sw', 'co'],
  type: ['eq', 'in'],
  authoritative: ['eq'],
  connectorName: ['eq', 'in'],
  description: ['sw', 'co'],
};
const SORTERS = ['name', 'id', 'created', 'modified', 'type'];
const MAX_LIMIT = 250;

function field(s: SourceRecord, f: string): unknown {
  if (f === 'connectorName') return s.type;
  return (s as unknown as Record<string, unknown>)[f];
}

const READONLY = new Set(['id', 'created', 'modified', 'type', 'connector', 'authoritative']);

export function sourceRoutes(ctx: SimContext): RouteDef[] {
  const { tenant } = ctx;
  return [
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/sources',
      scope: 'sourcesRead',
      page: (req) => pageOfQuery(req.query, MAX_LIMIT),
      handler: (req) => {
        const p = listParams(req.query, MAX_LIMIT);
        const expr = req.query['filters'] ? parseFilter(req.query['filters']) : undefined;
        if (expr) checkFilterFields(expr, FILTERS);
        const sorters = parseSorters(req.query['sorters'], SORTERS);
        let items = [...tenant.sources.values()];
        if (expr) items = items.filter((s) => evalFilter(expr, s, field));
        items = sortBy(items, sorters, field);
        const headers = p.count ? { 'x-total-count': String(items.length) } : undefined;
        return ok(items.slice(p.offset, p.offset + p.limit).map(sourceView), 200, headers);
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/sources/{id}',
      scope: 'sourcesRead',
      handler: (req) => ok(sourceView(tenant.source(req.params['id'] as string))),
    }),
    ...versioned(API_VERSIONS, {
      method: 'PATCH',
      path: '/sources/{id}',
      scope: 'sourcesWrite',
      handler: (req) => {
        const s = tenant.source(req.params['id'] as string);
        const ops = parsePatch(req.body);
        for (const op of ops) {
          const top = op.path.split('/')[1] ?? '';
          if (READONLY.has(top)) throw badRequest(`Source attribute "${top}" cannot be patched`);
        }
        const patched = applyPatch(sourceView(s), ops);
        const attrs = { ...((patched['connectorAttributes'] as Record<string, unknown> | undefined) ?? {}) };
        const enabled = typeof attrs['enabled'] === 'boolean' ? attrs['enabled'] : s.enabled;
        delete attrs['enabled'];
        const owner = patched['owner'] as { id?: string; name?: string } | undefined;
        const next: SourceRecord = {
          ...s,
          name: typeof patched['name'] === 'string' ? patched['name'] : s.name,
          description: typeof patched['description'] === 'string' ? patched['description'] : s.description,
          owner: owner?.id ? { id: owner.id, name: owner.name ?? '' } : s.owner,
          connectorAttributes: attrs,
          enabled,
          modified: tenant.now(),
        };
        tenant.replaceSource(next);
        return ok(sourceView(next));
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/sources/{id}/schemas',
      scope: 'sourcesRead',
      handler: (req) => ok([schemaView(tenant.source(req.params['id'] as string))]),
    }),
  ];
}
