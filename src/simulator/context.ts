import type { IncomingHttpHeaders } from 'node:http';
import type { AuthService, ScopeGroup } from './auth';
import type { FaultInjector } from './faults';
import type { ListCache, SearchCursors } from './paging';
import type { RateLimiter } from './rate-limit';
import type { TaskOutcome } from './records';
import type { RequestLog } from './request-log';
import type { Tenant } from './store';

/** Everything route handlers share. */
export interface SimContext {
  tenant: Tenant;
  auth: AuthService;
  limiter: RateLimiter;
  faults: FaultInjector;
  log: RequestLog;
  cache: ListCache;
  cursors: SearchCursors;
  /** Outcome of the next aggregations, per source id ('*' = any source). */
  aggregationOutcomes: Map<string, TaskOutcome>;
  /** Called when an aggregation task of a source completes successfully (e.g. to ingest the connector's output). */
  onAggregationSuccess?: (sourceId: string) => Promise<void> | void;
  /**
   * The platform's side of an aggregation run through the connector while its task is open (the
   * simulator plays the platform against a connector URL); undefined for sources it does not play.
   */
  playAggregation?: (sourceId: string) => Promise<string | undefined> | undefined;
  baseurl: string;
}

export interface SimRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
  headers: IncomingHttpHeaders;
  clientId?: string;
}

export interface SimResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteDef {
  method: HttpMethod;
  /** Path template with {param} placeholders, e.g. '/v3/accounts/{id}'. */
  template: string;
  /** Scope group required; undefined = no bearer token needed (the token endpoint). */
  scope?: ScopeGroup;
  handler: (req: SimRequest) => SimResponse | Promise<SimResponse>;
  /** 1-based page index of a request, for page-targeted faults. */
  page?: (req: SimRequest) => number | undefined;
}

export const API_VERSIONS = ['v3', 'beta', 'v2024'] as const;

/** The same handler under several version prefixes, as the platform serves most resources. */
export function versioned(versions: readonly string[], def: Omit<RouteDef, 'template'> & { path: string }): RouteDef[] {
  const { path, ...rest } = def;
  return versions.map((v) => ({ ...rest, template: `/${v}${path}` }));
}

export function ok(body: unknown, status = 200, headers?: Record<string, string>): SimResponse {
  return { status, body, headers };
}

export function objectBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  return body as Record<string, unknown>;
}
