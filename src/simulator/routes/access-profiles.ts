import { API_VERSIONS, ok, versioned, type RouteDef, type SimContext } from '../context';
import { notFound } from '../errors';
import { checkFilterFields, evalFilter, parseFilter, type FilterOp } from '../filter-parser';
import { listParams, pageOfQuery, parseSorters, sortBy } from '../paging';
import type { AccessProfileRecord } from '../records';
import { accessProfileView } from '../views';

const FILTERS: Record<string, readonly FilterOp[]> = {
  id: ['eq', 'in'],
  name: ['eq', 'in', 'sw', 'co'],
  'source.id': ['eq', 'in'],
  requestable: ['eq'],
  created: ['gt', 'ge', 'lt', 'le'],
  modified: ['gt', 'ge', 'lt', 'le'],
};
const MAX_LIMIT = 250;

function field(ap: AccessProfileRecord, f: string): unknown {
  if (f === 'source.id') return ap.sourceId;
  return (ap as unknown as Record<string, unknown>)[f];
}

/**
 * Access profiles (read-only). Who holds one is answered by identity search: `access.id:"<id>"`.
 */
export function accessProfileRoutes(ctx: SimContext): RouteDef[] {
  const { tenant } = ctx;
  return [
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/access-profiles',
      scope: 'accessProfiles',
      page: (req) => pageOfQuery(req.query, 50),
      handler: (req) => {
        const p = listParams(req.query, MAX_LIMIT, 50);
        const expr = req.query['filters'] ? parseFilter(req.query['filters']) : undefined;
        if (expr) checkFilterFields(expr, FILTERS);
        const sorters = parseSorters(req.query['sorters'], ['name', 'created', 'modified']);
        const items = sortBy(
          [...tenant.accessProfiles.values()].filter((ap) => !expr || evalFilter(expr, ap, field)),
          sorters,
          field,
        );
        const headers = p.count ? { 'x-total-count': String(items.length) } : undefined;
        return ok(
          items.slice(p.offset, p.offset + p.limit).map((ap) => accessProfileView(ap, tenant)),
          200,
          headers,
        );
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/access-profiles/{id}',
      scope: 'accessProfiles',
      handler: (req) => {
        const ap = tenant.accessProfiles.get(req.params['id'] as string);
        if (!ap) throw notFound(`Access profile ${req.params['id']} was not found`);
        return ok(accessProfileView(ap, tenant));
      },
    }),
  ];
}
