import { API_VERSIONS, objectBody, ok, versioned, type RouteDef, type SimContext } from '../context';
import { badRequest, notFound } from '../errors';
import { applyPatch, parsePatch } from '../json-patch';
import type { JsonObject } from '../records';

/** Workflows: list/create/get/update/delete and `POST /workflows/{id}/test`, which records its input. */
export function workflowRoutes(ctx: SimContext): RouteDef[] {
  const { tenant } = ctx;
  const workflow = (id: string): JsonObject => {
    const w = tenant.workflows.get(id);
    if (!w) throw notFound(`Workflow ${id} was not found`);
    return w;
  };
  const save = (w: JsonObject): JsonObject => {
    tenant.workflows.set(w['id'] as string, w);
    tenant.versions.workflows++;
    return w;
  };
  return [
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/workflows',
      scope: 'workflows',
      // unpaged by default (as the connector calls it); limit/offset honoured when given
      handler: (req) => {
        const all = [...tenant.workflows.values()];
        const offset = Number(req.query['offset'] ?? 0) || 0;
        const limit = req.query['limit'] === undefined ? all.length : Number(req.query['limit']) || 0;
        return ok(all.slice(offset, offset + limit));
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'POST',
      path: '/workflows',
      scope: 'workflows',
      handler: (req) => {
        const b = objectBody(req.body);
        if (typeof b['name'] !== 'string' || b['name'] === '') throw badRequest('name is required');
        const now = tenant.now();
        return ok(
          save({
            enabled: false,
            description: '',
            ...b,
            id: tenant.newId(),
            executionCount: 0,
            failureCount: 0,
            created: now,
            modified: now,
            creator: { type: 'IDENTITY', id: tenant.meta.ownerIdentityId ?? '', name: 'owner' },
          }),
        );
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'GET',
      path: '/workflows/{id}',
      scope: 'workflows',
      handler: (req) => ok(workflow(req.params['id'] as string)),
    }),
    ...versioned(API_VERSIONS, {
      method: 'PUT',
      path: '/workflows/{id}',
      scope: 'workflows',
      handler: (req) => {
        const w = workflow(req.params['id'] as string);
        return ok(save({ ...objectBody(req.body), id: w['id'], created: w['created'], modified: tenant.now() }));
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'PATCH',
      path: '/workflows/{id}',
      scope: 'workflows',
      handler: (req) => {
        const w = workflow(req.params['id'] as string);
        const next = applyPatch(w, parsePatch(req.body));
        return ok(save({ ...next, id: w['id'], created: w['created'], modified: tenant.now() }));
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'DELETE',
      path: '/workflows/{id}',
      scope: 'workflows',
      handler: (req) => {
        const w = workflow(req.params['id'] as string);
        tenant.workflows.delete(w['id'] as string);
        tenant.versions.workflows++;
        return { status: 204 };
      },
    }),
    ...versioned(API_VERSIONS, {
      method: 'POST',
      path: '/workflows/{id}/test',
      scope: 'workflows',
      handler: (req) => {
        const w = workflow(req.params['id'] as string);
        const b = objectBody(req.body);
        if (b['input'] === undefined || b['input'] === null || typeof b['input'] !== 'object')
          throw badRequest('input is required');
        const executionId = tenant.newId();
        tenant.workflowRuns.push({
          workflowId: w['id'] as string,
          executionId,
          input: structuredClone(b['input']),
          at: tenant.now(),
        });
        w['executionCount'] = Number(w['executionCount'] ?? 0) + 1;
        return ok({ workflowExecutionId: executionId });
      },
    }),
  ];
}
