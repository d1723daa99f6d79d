import { API_VERSIONS, objectBody, ok, versioned, type RouteDef, type SimContext } from '../context';
import { badRequest } from '../errors';
import { checkFilterFields, evalFilter, parseFilter, requiredEq, type FilterOp } from '../filter-parser';
import { parsePatch } from '../json-patch';
import { listParams, pageOfQuery, parseSorters, sortBy } from '../paging';
import type { AccountRecord } from '../records';
import { accountView } from '../views';

const FILTERS: Record<string, readonly FilterOp[]> = {
  id: ['eq', 'in'],
  identityId: ['eq', 'in', 'isnull', 'pr'],
  name: ['eq', 'in', 'sw'],
  nativeIdentity: ['eq', 'in', 'sw'],
  sourceId: ['eq', 'in'],
  uncorrelated: ['eq'],
  isMachine: ['eq'],
  disabled: ['eq'],
  manuallyCorrelated: ['eq'],
  created: ['eq', 'gt', 'ge', 'lt', 'le'],
  modified: ['eq', 'gt', 'ge', 'lt', 'le'],
};
const SORTERS = ['id', 'name', 'created', 'modified', 'sourceId', 'identityId', 'nativeIdentity', 'manuallyCorrelated'];
const MAX_LIMIT = 250;

function field(a: AccountRecord, f: string): unknown {
  if (f === 'uncorrelated') return !a.identityId;
  return (a as unknown as Record<string, unknown>)[f];
}

export function accountRoutes(ctx: SimContext): RouteDef[] {
  const { tenant } = ctx;

  const list = (query: Record<string, string>): AccountRecord[] => {
    const filters = query['filters'] ?? '';
    const sorters = query['sorters'] ?? '';
    const expr = filters ? parseFilter(filters) : undefined;
    if (expr) checkFilterFields(expr, FILTERS);
    const sort = parseSorters(sorters || undefined, SORTERS);
    return ctx.cache.get(`accounts|${filters}|${sorters}`, tenant.versions.accounts, () => {
      const sourceId = expr ? requiredEq(expr, 'sourceId') : undefined;
      const base = sourceId !== undefined ? tenant.accountsOfSource(sourceId).values() : tenant.accounts.values();
      const out: AccountRecord[] = [];
      for (const a of base) if (!expr || evalFilter(expr, a, field)) out.push(a);
      return sortBy(out, sort, field);
    });
  };

  const accepted = (id: string) => ok({ id }, 202);

  return [
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/accounts',
      scope: 'accountsRead',
      page: (req) => pageOfQuery(req.query, MAX_LIMIT),
      handler: (req) => {
        const p = listParams(req.query, MAX_LIMIT);
        const items = list(req.query);
        const headers = p.count ? { 'x-total-count': String(items.length) } : undefined;
        return ok(
          items.slice(p.offset, p.offset + p.limit).map((a) => accountView(a, tenant)),
          200,
          headers,
        );
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/accounts/{id}',
      scope: 'accountsRead',
      handler: (req) => ok(accountView(tenant.account(req.params['id'] as string), tenant)),
    }),
    ...versioned(API_VERSIONS, {
      method: 'POST',
      path: '/accounts',
      scope: 'accountsWrite',
      handler: (req) => {
        const attrs = objectBody(objectBody(req.body)['attributes']);
        const sourceId = attrs['sourceId'];
        if (typeof sourceId !== 'string' || !sourceId) throw badRequest('attributes.sourceId is required');
        tenant.source(sourceId);
        const { sourceId: _s, ...rest } = attrs;
        void _s;
        const native = String(rest['nativeIdentity'] ?? rest['name'] ?? rest['uid'] ?? tenant.newId());
        if (tenant.accountByNative(sourceId, native))
          throw badRequest(`An account with native identity "${native}" already exists on source ${sourceId}`);
        const now = tenant.now();
        const a = tenant.addAccount({
          id: tenant.newId(),
          sourceId,
          nativeIdentity: native,
          name: String(rest['name'] ?? native),
          disabled: false,
          locked: false,
          isMachine: rest['isMachine'] === true,
          manuallyCorrelated: false,
          attributes: rest,
          created: now,
          modified: now,
        });
        return accepted(a.id);
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'PUT',
      path: '/accounts/{id}',
      scope: 'accountsWrite',
      handler: (req) => {
        const a = tenant.account(req.params['id'] as string);
        const attrs = objectBody(req.body)['attributes'];
        if (attrs === null || typeof attrs !== 'object' || Array.isArray(attrs))
          throw badRequest('Request body must have an attributes object');
        tenant.updateAccount(a.id, { attributes: { ...(attrs as Record<string, unknown>) } });
        return accepted(a.id);
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'PATCH',
      path: '/accounts/{id}',
      scope: 'accountsWrite',
      handler: (req) => {
        const a = tenant.account(req.params['id'] as string);
        const changes: Partial<AccountRecord> = {};
        for (const op of parsePatch(req.body)) {
          if (op.path === '/identityId' && op.op !== 'remove') {
            if (typeof op.value !== 'string') throw badRequest('/identityId must be a string');
            tenant.identity(op.value);
            changes.identityId = op.value;
            changes.manuallyCorrelated = true;
          } else if (op.path === '/manuallyCorrelated' && op.op !== 'remove') {
            if (typeof op.value !== 'boolean') throw badRequest('/manuallyCorrelated must be a boolean');
            changes.manuallyCorrelated = op.value;
          } else {
            throw badRequest(`Patching ${op.path} is not supported; only /identityId and /manuallyCorrelated`);
          }
        }
        tenant.updateAccount(a.id, changes);
        return ok(accountView(tenant.account(a.id), tenant), 202);
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'DELETE',
      path: '/accounts/{id}',
      scope: 'accountsWrite',
      handler: (req) => accepted(tenant.removeAccount(req.params['id'] as string).id),
    }),
    ...versioned(['beta', 'v2024'], {
      method: 'POST',
      path: '/accounts/{id}/remove',
      scope: 'accountsWrite',
      handler: (req) => accepted(tenant.removeAccount(req.params['id'] as string).id),
    }),
    ...(['enable', 'disable'] as const).flatMap((action) =>
      versioned(API_VERSIONS, {
        method: 'POST',
        path: `/accounts/{id}/${action}`,
        scope: 'accountsWrite',
        handler: (req) => {
          const a = tenant.account(req.params['id'] as string);
          tenant.updateAccount(a.id, { disabled: action === 'disable' });
          return accepted(a.id);
        },
      }),
    ),
  ];
}
