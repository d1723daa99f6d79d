import type { CallOptions, PlatformIdentity } from './platform-common';

/**
 * What the review-form lifecycle needs from the platform: form definitions and instances
 * (custom forms), reviewer access profiles and their holders, and the notification workflow.
 * `src/platform/review-platform.ts` implements it with the same token, rate limiter, retries and
 * typed errors as PlatformPort. Same contract: failures throw FusionError PLATFORM_*, listings
 * are streamed and either complete or throw.
 */

/** formData field that marks an instance the connector is done with (see ReviewPlatformPort.closeFormInstance). */
export const CLOSED_FORM_FIELD = 'fusionClosed';

export type FormInstanceState = 'ASSIGNED' | 'IN_PROGRESS' | 'SUBMITTED' | 'COMPLETED' | 'CANCELLED';

export interface FormDefinitionCreate {
  name: string;
  description?: string;
  /** Identity that owns the definition (the source owner). */
  ownerId: string;
  /** Platform form elements (sections, fields), passed through as given. */
  formElements: Record<string, unknown>[];
  /** Inputs the definition accepts, e.g. [{ id: 'account', type: 'STRING', label: 'account' }]. */
  formInput?: Record<string, unknown>[];
}

export interface FormDefinition {
  id: string;
  name: string;
  description?: string;
  ownerId?: string;
  created?: string;
}

export interface FormInstanceCreate {
  formDefinitionId: string;
  /** Identity ids of the reviewers. */
  recipientIds: string[];
  /** ISO time after which the platform expires the instance. */
  expire: string;
  formInput?: Record<string, unknown>;
  /** Id of our source: instances are created on its behalf. */
  createdBySourceId: string;
}

export interface FormInstance {
  id: string;
  formDefinitionId: string;
  state: FormInstanceState;
  recipientIds: string[];
  expire?: string;
  formInput: Record<string, unknown>;
  /** The reviewer's answers, once submitted or completed. */
  formData: Record<string, unknown>;
  created?: string;
  modified?: string;
  /** Link a reviewer opens. */
  url?: string;
}

export interface AccessProfileRef {
  id: string;
  name: string;
  sourceId?: string;
  ownerId?: string;
}

export interface WorkflowRef {
  id: string;
  name: string;
  enabled: boolean;
}

export interface WorkflowCreate {
  name: string;
  description?: string;
  ownerId: string;
  /** Platform workflow definition ({ start, steps }), passed through as given. */
  definition: Record<string, unknown>;
  trigger?: Record<string, unknown>;
  enabled?: boolean;
}

export interface ReviewPlatformPort {
  createFormDefinition(def: FormDefinitionCreate, opts?: CallOptions): Promise<FormDefinition>;
  /** Definitions whose name equals `name` or, with `prefix`, starts with it. */
  searchFormDefinitions(query: { name: string; prefix?: boolean }, opts?: CallOptions): AsyncIterable<FormDefinition>;
  /** Deleting a definition that no longer exists is not an error. */
  deleteFormDefinition(id: string, opts?: CallOptions): Promise<void>;

  createFormInstance(input: FormInstanceCreate, opts?: CallOptions): Promise<FormInstance>;
  listFormInstances(formDefinitionId: string, opts?: CallOptions): AsyncIterable<FormInstance>;
  getFormInstance(id: string, opts?: CallOptions): Promise<FormInstance | undefined>;
  setFormInstanceState(id: string, state: FormInstanceState, opts?: CallOptions): Promise<FormInstance>;
  /**
   * Marks an instance as done with (formData.fusionClosed = reason) and, when `cancel`, cancels it:
   * instances of a shared definition cannot be deleted one by one.
   */
  closeFormInstance(id: string, reason: string, cancel: boolean, opts?: CallOptions): Promise<void>;

  /** Exact, case-sensitive name match (e.g. "HR Reviewer"). */
  findAccessProfileByName(name: string, opts?: CallOptions): Promise<AccessProfileRef | undefined>;
  identitiesWithAccessProfile(accessProfileId: string, opts?: CallOptions): AsyncIterable<PlatformIdentity>;

  listWorkflows(opts?: CallOptions): AsyncIterable<WorkflowRef>;
  createWorkflow(input: WorkflowCreate, opts?: CallOptions): Promise<WorkflowRef>;
  /** Runs a workflow with the given input (POST /workflows/{id}/test); returns the execution id. */
  runWorkflow(id: string, input: Record<string, unknown>, opts?: CallOptions): Promise<{ executionId?: string }>;
}
