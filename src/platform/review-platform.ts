import type { AxiosInstance, AxiosResponse } from 'axios';
import {
  AccessProfilesApi,
  CustomFormsBetaApi,
  WorkflowsApi,
  type CreateWorkflowRequest,
  type CreateFormDefinitionRequestBeta,
} from './sailpoint-api';
import { FusionError, isFusionError } from '../core/errors';
import type { CallOptions, PlatformIdentity } from '../core/ports/platform';
import type {
  AccessProfileRef,
  FormDefinition,
  FormDefinitionCreate,
  FormInstance,
  FormInstanceCreate,
  FormInstanceState,
  ReviewPlatformPort,
  WorkflowCreate,
  WorkflowRef,
} from '../core/ports/review-platform';
import { CLOSED_FORM_FIELD } from '../core/ports/review-platform';
import { ENDPOINT, PAGE_MAX } from './endpoint-templates';
import { offsetPages } from './paging';
import { filterValue } from './filter-value';
import type { PlatformCaller } from './platform-caller';
import type { PlatformRequest } from './request-executor';

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

const STATES = new Set<FormInstanceState>(['ASSIGNED', 'IN_PROGRESS', 'SUBMITTED', 'COMPLETED', 'CANCELLED']);

function toDefinition(raw: unknown): FormDefinition {
  const d = obj(raw);
  return {
    id: str(d.id) ?? '',
    name: str(d.name) ?? '',
    description: str(d.description),
    ownerId: str(obj(d.owner).id),
    created: str(d.created),
  };
}

function toInstance(raw: unknown): FormInstance {
  const i = obj(raw);
  const state = str(i.state) as FormInstanceState | undefined;
  return {
    id: str(i.id) ?? '',
    formDefinitionId: str(i.formDefinitionId) ?? '',
    state: state && STATES.has(state) ? state : 'ASSIGNED',
    recipientIds: Array.isArray(i.recipients)
      ? i.recipients.map((r) => str(obj(r).id) ?? '').filter((x) => x !== '')
      : [],
    expire: str(i.expire),
    formInput: obj(i.formInput),
    formData: obj(i.formData),
    created: str(i.created),
    modified: str(i.modified),
    url: str(i.standAloneFormUrl),
  };
}

function toWorkflow(raw: unknown): WorkflowRef {
  const w = obj(raw);
  return { id: str(w.id) ?? '', name: str(w.name) ?? '', enabled: w.enabled === true };
}

/** A list body: a bare array, or the custom-forms envelope { count, results }. */
function listBody(res: AxiosResponse, req: PlatformRequest): { items: unknown[]; total?: number } {
  if (Array.isArray(res.data)) return { items: res.data };
  const d = obj(res.data);
  if (Array.isArray(d.results)) return { items: d.results, total: typeof d.count === 'number' ? d.count : undefined };
  throw new FusionError(
    'PLATFORM_REQUEST_FAILED',
    `Platform API ${req.method} ${req.endpoint} answered with something other than a list`,
    { method: req.method, endpoint: req.endpoint },
  );
}

/** Review forms, reviewers and notification workflow on the platform, through PlatformClient's pipeline. */
export class ReviewPlatform implements ReviewPlatformPort {
  constructor(private readonly client: PlatformCaller) {}

  private forms(ax: AxiosInstance): CustomFormsBetaApi {
    return new CustomFormsBetaApi(this.client.configuration, undefined, ax);
  }

  async createFormDefinition(def: FormDefinitionCreate, opts?: CallOptions): Promise<FormDefinition> {
    const req: PlatformRequest = { method: 'POST', endpoint: ENDPOINT.formDefinitions, idempotent: false };
    const body = {
      name: def.name,
      description: def.description,
      owner: { type: 'IDENTITY', id: def.ownerId },
      formElements: def.formElements,
      formInput: def.formInput,
    } as unknown as CreateFormDefinitionRequestBeta;
    const res = await this.client.call(
      req,
      (ax, o) => this.forms(ax).createFormDefinition({ createFormDefinitionRequestBeta: body }, o),
      opts,
    );
    return toDefinition(res.data);
  }

  async *searchFormDefinitions(
    query: { name: string; prefix?: boolean },
    opts?: CallOptions,
  ): AsyncIterable<FormDefinition> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.formDefinitions, idempotent: true };
    const filters = `name ${query.prefix ? 'sw' : 'eq'} ${filterValue(query.name)}`;
    for await (const raw of offsetPages(
      this.client.pageSize(PAGE_MAX.formDefinitions),
      async (offset, limit, _first, signal) => {
        const res = await this.client.call(
          req,
          (ax, o) => this.forms(ax).searchFormDefinitionsByTenant({ offset, limit, filters, sorters: 'name' }, o),
          opts,
          signal,
        );
        return { items: listBody(res, req).items };
      },
    )) {
      yield toDefinition(raw);
    }
  }

  async deleteFormDefinition(id: string, opts?: CallOptions): Promise<void> {
    const req: PlatformRequest = { method: 'DELETE', endpoint: ENDPOINT.formDefinition, idempotent: true };
    try {
      await this.client.call(req, (ax, o) => this.forms(ax).deleteFormDefinition({ formDefinitionID: id }, o), opts);
    } catch (e) {
      if (!isFusionError(e, 'PLATFORM_NOT_FOUND')) throw e;
    }
  }

  async createFormInstance(input: FormInstanceCreate, opts?: CallOptions): Promise<FormInstance> {
    const req: PlatformRequest = { method: 'POST', endpoint: ENDPOINT.formInstances, idempotent: false };
    const body = {
      formDefinitionId: input.formDefinitionId,
      recipients: input.recipientIds.map((id) => ({ type: 'IDENTITY' as const, id })),
      expire: input.expire,
      formInput: input.formInput,
      createdBy: { type: 'SOURCE' as const, id: input.createdBySourceId },
      standAloneForm: true,
    };
    const res = await this.client.call(req, (ax, o) => this.forms(ax).createFormInstance({ body }, o), opts);
    return toInstance(res.data);
  }

  async *listFormInstances(formDefinitionId: string, opts?: CallOptions): AsyncIterable<FormInstance> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.formInstances, idempotent: true };
    const filters = `formDefinitionId eq ${filterValue(formDefinitionId)}`;
    for await (const raw of offsetPages(
      this.client.pageSize(PAGE_MAX.formInstances),
      async (offset, limit, _first, signal) => {
        // The library's method takes no query parameters in this version: they go as axios params.
        const res = await this.client.call(
          req,
          (ax, o) => this.forms(ax).searchFormInstancesByTenant({ ...o, params: { offset, limit, filters } }),
          opts,
          signal,
        );
        return { items: listBody(res, req).items };
      },
    )) {
      yield toInstance(raw);
    }
  }

  async getFormInstance(id: string, opts?: CallOptions): Promise<FormInstance | undefined> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.formInstance, idempotent: true };
    try {
      const res = await this.client.call(
        req,
        (ax, o) => this.forms(ax).getFormInstanceByKey({ formInstanceID: id }, o),
        opts,
      );
      return toInstance(res.data);
    } catch (e) {
      if (isFusionError(e, 'PLATFORM_NOT_FOUND')) return undefined;
      throw e;
    }
  }

  async setFormInstanceState(id: string, state: FormInstanceState, opts?: CallOptions): Promise<FormInstance> {
    const req: PlatformRequest = { method: 'PATCH', endpoint: ENDPOINT.formInstance, idempotent: true };
    const body = [{ op: 'replace', path: '/state', value: state }] as unknown as Array<{ [key: string]: object }>;
    const res = await this.client.call(
      req,
      (ax, o) => this.forms(ax).patchFormInstance({ formInstanceID: id, body }, o),
      opts,
    );
    return toInstance(res.data);
  }

  async closeFormInstance(id: string, reason: string, cancel: boolean, opts?: CallOptions): Promise<void> {
    const req: PlatformRequest = { method: 'PATCH', endpoint: ENDPOINT.formInstance, idempotent: true };
    const ops: Array<Record<string, unknown>> = [{ op: 'add', path: `/formData/${CLOSED_FORM_FIELD}`, value: reason }];
    if (cancel) ops.push({ op: 'replace', path: '/state', value: 'CANCELLED' });
    const body = ops as unknown as Array<{ [key: string]: object }>;
    await this.client.call(req, (ax, o) => this.forms(ax).patchFormInstance({ formInstanceID: id, body }, o), opts);
  }

  async findAccessProfileByName(name: string, opts?: CallOptions): Promise<AccessProfileRef | undefined> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.accessProfiles, idempotent: true };
    const res = await this.client.call(
      req,
      (ax, o) =>
        new AccessProfilesApi(this.client.configuration, undefined, ax).listAccessProfiles(
          { filters: `name eq ${filterValue(name)}`, limit: 50 },
          o,
        ),
      opts,
    );
    // The platform's eq on names is case-insensitive; the spec's source names are not.
    const hit = listBody(res, req)
      .items.map(obj)
      .find((ap) => ap.name === name);
    if (!hit) return undefined;
    return { id: str(hit.id) ?? '', name, sourceId: str(obj(hit.source).id), ownerId: str(obj(hit.owner).id) };
  }

  identitiesWithAccessProfile(accessProfileId: string, opts?: CallOptions): AsyncIterable<PlatformIdentity> {
    return this.client.searchIdentities(`access.id:${filterValue(accessProfileId)}`, opts);
  }

  async *listWorkflows(opts?: CallOptions): AsyncIterable<WorkflowRef> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.workflows, idempotent: true };
    const res = await this.client.call(
      req,
      (ax, o) => new WorkflowsApi(this.client.configuration, undefined, ax).listWorkflows(o),
      opts,
    );
    for (const w of listBody(res, req).items) yield toWorkflow(w);
  }

  async createWorkflow(input: WorkflowCreate, opts?: CallOptions): Promise<WorkflowRef> {
    const req: PlatformRequest = { method: 'POST', endpoint: ENDPOINT.workflows, idempotent: false };
    const body = {
      name: input.name,
      description: input.description,
      owner: { type: 'IDENTITY', id: input.ownerId },
      definition: input.definition,
      trigger: input.trigger,
      enabled: input.enabled ?? false,
    } as unknown as CreateWorkflowRequest;
    const res = await this.client.call(
      req,
      (ax, o) =>
        new WorkflowsApi(this.client.configuration, undefined, ax).createWorkflow({ createWorkflowRequest: body }, o),
      opts,
    );
    return toWorkflow(res.data);
  }

  async runWorkflow(id: string, input: Record<string, unknown>, opts?: CallOptions): Promise<{ executionId?: string }> {
    // Each run sends e-mails: never repeated unless the platform certainly did not take it.
    const req: PlatformRequest = { method: 'POST', endpoint: ENDPOINT.workflowTest, idempotent: false };
    const res = await this.client.call(
      req,
      (ax, o) =>
        new WorkflowsApi(this.client.configuration, undefined, ax).testWorkflow(
          { id, testWorkflowRequest: { input } },
          o,
        ),
      opts,
    );
    return { executionId: str(obj(res.data).workflowExecutionId) };
  }
}
