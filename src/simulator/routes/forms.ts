import { objectBody, ok, versioned, type RouteDef, type SimContext, type SimResponse } from '../context';
import { badRequest, notFound } from '../errors';
import { renderFormElements } from '../form-render';
import { checkFilterFields, evalFilter, parseFilter, type FilterOp } from '../filter-parser';
import { applyPatch, parsePatch } from '../json-patch';
import { listParams, pageOfQuery, parseSorters, sortBy } from '../paging';
import type { JsonObject } from '../records';

const FORM_VERSIONS = ['beta', 'v2024'] as const;
const MAX_LIMIT = 250;
const STATES = ['ASSIGNED', 'IN_PROGRESS', 'SUBMITTED', 'COMPLETED', 'CANCELLED'];

const DEF_FILTERS: Record<string, readonly FilterOp[]> = {
  id: ['eq', 'in'],
  name: ['eq', 'in', 'sw', 'co'],
  description: ['eq', 'sw', 'co'],
  created: ['gt', 'ge', 'lt', 'le'],
  modified: ['gt', 'ge', 'lt', 'le'],
};
const INSTANCE_FILTERS: Record<string, readonly FilterOp[]> = {
  id: ['eq', 'in'],
  formDefinitionId: ['eq', 'in'],
  state: ['eq', 'in'],
};

const get = (o: JsonObject, f: string): unknown => o[f];

function listOf(
  items: JsonObject[],
  query: Record<string, string>,
  filters: Record<string, readonly FilterOp[]>,
): SimResponse {
  const p = listParams(query, MAX_LIMIT);
  const expr = query['filters'] ? parseFilter(query['filters']) : undefined;
  if (expr) checkFilterFields(expr, filters);
  const sorters = parseSorters(query['sorters'], ['name', 'created', 'modified', 'id']);
  const matched = sortBy(expr ? items.filter((o) => evalFilter(expr, o, get)) : items, sorters, get);
  return ok({ count: matched.length, results: matched.slice(p.offset, p.offset + p.limit) });
}

/** Custom forms (beta and v2024): definitions and instances, as the review flow uses them. */
export function formRoutes(ctx: SimContext): RouteDef[] {
  const { tenant } = ctx;
  const definition = (id: string): JsonObject => {
    const d = tenant.formDefinitions.get(id);
    if (!d) throw notFound(`Form definition ${id} was not found`);
    return d;
  };
  const instance = (id: string): JsonObject => {
    const i = tenant.formInstances.get(id);
    if (!i) throw notFound(`Form instance ${id} was not found`);
    return i;
  };

  return [
    ...versioned(FORM_VERSIONS, {
      method: 'GET',
      path: '/form-definitions',
      scope: 'forms',
      page: (req) => pageOfQuery(req.query, MAX_LIMIT),
      handler: (req) => listOf([...tenant.formDefinitions.values()], req.query, DEF_FILTERS),
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'POST',
      path: '/form-definitions',
      scope: 'forms',
      handler: (req) => {
        const b = objectBody(req.body);
        if (typeof b['name'] !== 'string' || b['name'] === '') throw badRequest('name is required');
        const owner = objectBody(b['owner']);
        if (typeof owner['id'] !== 'string') throw badRequest('owner.id is required');
        const now = tenant.now();
        const def: JsonObject = {
          id: tenant.newId(),
          name: b['name'],
          description: b['description'] ?? '',
          owner,
          usedBy: b['usedBy'] ?? [],
          formInput: b['formInput'] ?? [],
          formElements: b['formElements'] ?? [],
          formConditions: b['formConditions'] ?? [],
          created: now,
          modified: now,
        };
        tenant.formDefinitions.set(def['id'] as string, def);
        tenant.versions.forms++;
        return ok(def, 201);
      },
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'GET',
      path: '/form-definitions/{id}',
      scope: 'forms',
      handler: (req) => ok(definition(req.params['id'] as string)),
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'PATCH',
      path: '/form-definitions/{id}',
      scope: 'forms',
      handler: (req) => {
        const def = definition(req.params['id'] as string);
        const next = applyPatch(def, parsePatch(req.body));
        next['id'] = def['id'];
        next['created'] = def['created'];
        next['modified'] = tenant.now();
        tenant.formDefinitions.set(def['id'] as string, next);
        tenant.versions.forms++;
        return ok(next);
      },
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'DELETE',
      path: '/form-definitions/{id}',
      scope: 'forms',
      handler: (req) => {
        const id = req.params['id'] as string;
        definition(id);
        tenant.formDefinitions.delete(id);
        // instances die with their definition ("first reviewer wins")
        for (const [iid, inst] of tenant.formInstances)
          if (inst['formDefinitionId'] === id) tenant.formInstances.delete(iid);
        tenant.versions.forms++;
        return { status: 204 };
      },
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'POST',
      path: '/form-instances',
      scope: 'forms',
      handler: (req) => {
        const b = objectBody(req.body);
        const defId = b['formDefinitionId'];
        if (typeof defId !== 'string') throw badRequest('formDefinitionId is required');
        const def = tenant.formDefinitions.get(defId);
        if (!def) throw badRequest(`Form definition ${defId} does not exist`);
        if (typeof b['expire'] !== 'string' || Number.isNaN(Date.parse(b['expire'])))
          throw badRequest('expire must be an ISO date-time');
        const recipients = b['recipients'];
        if (!Array.isArray(recipients) || recipients.length === 0)
          throw badRequest('recipients must be a non-empty array');
        if (b['createdBy'] === undefined) throw badRequest('createdBy is required');
        const state = b['state'] ?? 'ASSIGNED';
        if (typeof state !== 'string' || !STATES.includes(state))
          throw badRequest(`state must be one of ${STATES.join(', ')}`);
        const formInput = (b['formInput'] ?? {}) as JsonObject;
        const id = tenant.newId();
        const now = tenant.now();
        const inst: JsonObject = {
          id,
          created: now,
          modified: now,
          createdBy: b['createdBy'],
          expire: b['expire'],
          formConditions: def['formConditions'],
          formData: null,
          formDefinitionId: defId,
          formElements: renderFormElements(def, formInput),
          formErrors: [],
          formInput,
          recipients,
          standAloneForm: b['standAloneForm'] === true,
          standAloneFormUrl: `${ctx.baseurl}/ui/d/forms/${id}`,
          state,
        };
        tenant.formInstances.set(id, inst);
        tenant.versions.forms++;
        return ok(inst, 201);
      },
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'GET',
      path: '/form-instances',
      scope: 'forms',
      handler: (req) => listOf([...tenant.formInstances.values()], req.query, INSTANCE_FILTERS),
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'GET',
      path: '/form-instances/{id}',
      scope: 'forms',
      handler: (req) => ok(instance(req.params['id'] as string)),
    }),
    ...versioned(FORM_VERSIONS, {
      method: 'PATCH',
      path: '/form-instances/{id}',
      scope: 'forms',
      handler: (req) => {
        const inst = instance(req.params['id'] as string);
        const ops = parsePatch(req.body);
        for (const op of ops) {
          if (op.path === '/state') {
            if (typeof op.value !== 'string' || !STATES.includes(op.value))
              throw badRequest(`state must be one of ${STATES.join(', ')}`);
          } else if (!op.path.startsWith('/formData')) {
            throw badRequest(`Patching ${op.path} is not supported; only /state and /formData`);
          }
        }
        const base: JsonObject = { ...inst, formData: inst['formData'] ?? {} };
        const next = applyPatch(base, ops);
        next['modified'] = tenant.now();
        tenant.formInstances.set(inst['id'] as string, next);
        tenant.versions.forms++;
        return ok(next);
      },
    }),
  ];
}
