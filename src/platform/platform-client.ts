import type { AxiosResponse } from 'axios';
import {
  AccountsApi,
  SearchApi,
  SourcesApi,
  SourcesBetaApi,
  TaskManagementBetaApi,
  type Search,
} from './sailpoint-api';
import { callsInFlight } from '../core/config/api-use-settings';
import { FusionError, isFusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import type {
  CallOptions,
  PlatformAccount,
  PlatformIdentity,
  PlatformSession,
  PlatformSource,
  PlatformTask,
  SourceSchema,
} from '../core/ports/platform';
import type { ReviewPlatformPort } from '../core/ports/review-platform';
import type { ConcurrencyGate } from './concurrency-gate';
import { ENDPOINT, IDENTITY_PAGE, PAGE_MAX } from './endpoint-templates';
import { filterValue } from './filter-value';
import type { PlatformCaller, Send } from './platform-caller';
import { LibraryHandle } from './library';
import { ReviewPlatform } from './review-platform';
import { IDENTITY_FIELDS, toAccount, toIdentity, toSchema, toSource, toTask } from './mappers';
import { offsetPages, searchAfterPages } from './paging';
import { pageSizeFor, type PlatformSettings } from './platform-settings';
import type { RateLimiter } from './rate-limiter';
import { RequestExecutor, type PlatformRequest } from './request-executor';
import { DEFAULT_RETRY_POLICY, validateRetryPolicy, type RetryPolicy } from './retry-policy';
import { TokenProvider, type TokenProviderOptions } from './token-provider';

export interface PlatformClientDeps {
  limiter: RateLimiter;
  /** The `limiter` label of this client's metrics (see limiterLabel); none in unit tests. */
  limiterLabel?: string;
  /** Cap on requests in flight; absent when "Enable queue" is off. */
  gate?: ConcurrencyGate;
  logger: Logger;
  /** Aborts every call of this client (the command's signal). */
  signal?: AbortSignal;
  policy?: Partial<RetryPolicy>;
  random?: () => number;
  /** Called as each request is dispatched (after its rate grant); for benchmarks and tests. */
  onDispatch?: (endpoint: string) => void;
  /** Identities per search page (IDENTITY_PAGE); tests page small tenants with fewer. */
  identityPage?: number;
  /** Tokens shared with the process's other clients (token-cache.ts); this client's own otherwise. */
  tokenCache?: TokenProviderOptions['cache'];
}

/** A search of identities asking only for the fields toIdentity reads (IDENTITY_FIELDS). */
function identitySearch(query: string): Search {
  return {
    indices: ['identities'],
    query: { query },
    includeNested: false,
    queryResultFilter: { includes: IDENTITY_FIELDS },
  };
}

/** Sends one request: gets the library objects' axios instance and the per-attempt options. */

function jsonPointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function totalCount(res: AxiosResponse): number | undefined {
  const raw = (res.headers as Record<string, unknown>)['x-total-count'];
  const n = typeof raw === 'string' ? Number(raw) : typeof raw === 'number' ? raw : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function asArray(data: unknown, req: PlatformRequest): unknown[] {
  if (Array.isArray(data)) return data;
  // A listing that is not a list must fail, not look like an empty (complete) page.
  throw new FusionError(
    'PLATFORM_REQUEST_FAILED',
    `Platform API ${req.method} ${req.endpoint} answered with something other than a list`,
    { ...req },
  );
}

/**
 * The platform API on top of sailpoint-api-client. The constructor does no I/O; each call
 * gets a token, a concurrency slot and a rate grant, then is retried by one policy (see
 * RequestExecutor). Listings are streamed page by page and fail as a whole.
 */
export class PlatformClient implements PlatformSession, PlatformCaller {
  readonly tokens: TokenProvider;
  private readonly lib: LibraryHandle;
  private readonly executor: RequestExecutor;
  private readonly onDispatch?: (endpoint: string) => void;
  private readonly identityPage: number;

  constructor(
    readonly settings: PlatformSettings,
    deps: PlatformClientDeps,
  ) {
    const policy = validateRetryPolicy({ ...DEFAULT_RETRY_POLICY, ...deps.policy });
    this.onDispatch = deps.onDispatch;
    this.identityPage = Math.max(1, Math.min(deps.identityPage ?? IDENTITY_PAGE, PAGE_MAX.search));
    this.tokens = new TokenProvider({
      baseurl: settings.baseurl,
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      timeoutMs: Math.min(30_000, policy.attemptTimeoutMs),
      ...(deps.tokenCache ? { cache: deps.tokenCache } : {}),
    });
    this.lib = new LibraryHandle(settings.baseurl, () => this.tokens.get(deps.signal));
    this.executor = new RequestExecutor({
      tokens: this.tokens,
      limiter: deps.limiter,
      limiterLabel: deps.limiterLabel,
      gate: deps.gate,
      policy,
      callTimeoutMs: settings.provisioningTimeout * 1000,
      requestsPerSecond: settings.enableQueue ? settings.requestsPerSecond : undefined,
      baseurl: settings.baseurl,
      logger: deps.logger,
      signal: deps.signal,
      random: deps.random,
    });
  }

  /** Runs one request through the executor. Exposed for sibling adapters (review forms). */
  call<T>(
    req: PlatformRequest,
    send: Send<T>,
    opts?: CallOptions,
    pageSignal?: AbortSignal,
  ): Promise<AxiosResponse<T>> {
    return this.executor.run(
      req,
      ({ signal, beforeSend, token }) => {
        const ax = this.lib.axios();
        ax.interceptors.request.use(async (config) => {
          await beforeSend();
          this.onDispatch?.(req.endpoint);
          // The executor's token, not the one the library read: a 401 must invalidate what was sent.
          config.headers.set('Authorization', `Bearer ${token}`);
          return config;
        });
        return send(ax, { signal });
      },
      [opts?.signal, pageSignal],
    );
  }

  /** Pages requested ahead by a listing: enough to keep the request budget busy, bounded in memory. */
  get readAhead(): number {
    return callsInFlight(this.settings);
  }

  /** The library configuration (token supplier, no retries) for building API objects. */
  get configuration(): LibraryHandle['configuration'] {
    return this.lib.configuration;
  }

  pageSize(endpointMax: number): number {
    return pageSizeFor(this.settings, endpointMax);
  }

  reviews(): ReviewPlatformPort {
    return new ReviewPlatform(this);
  }

  /** Sockets carrying a request right now; 0 once every call has settled or been aborted. */
  openSockets(): number {
    return this.lib.openSockets();
  }

  /** Releases pooled connections. Calls in flight are not affected by the caller's signal here. */
  close(): void {
    this.lib.close();
  }

  async *listSources(opts?: CallOptions): AsyncIterable<PlatformSource> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.sources, idempotent: true };
    const fetch = async (offset: number, limit: number, first: boolean, signal: AbortSignal) => {
      const res = await this.call(
        req,
        (ax, o) =>
          new SourcesApi(this.configuration, undefined, ax).listSources(
            { limit, offset, count: first, sorters: 'id' },
            o,
          ),
        opts,
        signal,
      );
      return { items: asArray(res.data, req), total: first ? totalCount(res) : undefined };
    };
    for await (const raw of offsetPages(this.pageSize(PAGE_MAX.sources), fetch, this.readAhead)) {
      yield toSource(raw);
    }
  }

  async getSource(id: string, opts?: CallOptions): Promise<PlatformSource> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.source, idempotent: true };
    const res = await this.call(
      req,
      (ax, o) => new SourcesApi(this.configuration, undefined, ax).getSource({ id }, o),
      opts,
    );
    return toSource(res.data);
  }

  async patchSourceConnectorAttributes(
    sourceId: string,
    values: Record<string, unknown>,
    opts?: CallOptions,
  ): Promise<void> {
    const ops = Object.entries(values).map(([key, value]) => ({
      op: 'add' as const,
      path: `/connectorAttributes/${jsonPointerSegment(key)}`,
      value: value as object,
    }));
    if (ops.length === 0) return;
    // "add" on an object member replaces it or creates it: sending it twice has the same effect.
    const req: PlatformRequest = { method: 'PATCH', endpoint: ENDPOINT.source, idempotent: true };
    await this.call(
      req,
      (ax, o) =>
        new SourcesApi(this.configuration, undefined, ax).updateSource({ id: sourceId, jsonPatchOperation: ops }, o),
      opts,
    );
  }

  async getSourceSchemas(sourceId: string, opts?: CallOptions): Promise<SourceSchema[]> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.sourceSchemas, idempotent: true };
    const res = await this.call(
      req,
      (ax, o) => new SourcesApi(this.configuration, undefined, ax).getSourceSchemas({ sourceId }, o),
      opts,
    );
    return asArray(res.data, req).map(toSchema);
  }

  async *listAccounts(
    query: { sourceId: string; filters?: string; limit?: number },
    opts?: CallOptions,
  ): AsyncIterable<PlatformAccount> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.accounts, idempotent: true };
    const filters = `sourceId eq ${filterValue(query.sourceId)}${query.filters ? ` and (${query.filters})` : ''}`;
    const max = query.limit;
    if (max !== undefined && max <= 0) return;
    let n = 0;
    const fetch = async (offset: number, limit: number, first: boolean, signal: AbortSignal) => {
      // Sorted by id so that pages are stable while other accounts are added.
      const res = await this.call(
        req,
        (ax, o) =>
          new AccountsApi(this.configuration, undefined, ax).listAccounts(
            { limit, offset, count: first, filters, sorters: 'id' },
            o,
          ),
        opts,
        signal,
      );
      return { items: asArray(res.data, req), total: first ? totalCount(res) : undefined };
    };
    for await (const raw of offsetPages(this.pageSize(PAGE_MAX.accounts), fetch, this.readAhead, max)) {
      yield toAccount(raw);
      if (max !== undefined && ++n >= max) return;
    }
  }

  async getAccount(id: string, opts?: CallOptions): Promise<PlatformAccount | undefined> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.account, idempotent: true };
    try {
      const res = await this.call(
        req,
        (ax, o) => new AccountsApi(this.configuration, undefined, ax).getAccount({ id }, o),
        opts,
      );
      return toAccount(res.data);
    } catch (e) {
      if (isFusionError(e, 'PLATFORM_NOT_FOUND')) return undefined;
      throw e;
    }
  }

  async findAccountByNativeIdentity(
    sourceId: string,
    nativeIdentity: string,
    opts?: CallOptions,
  ): Promise<PlatformAccount | undefined> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.accounts, idempotent: true };
    const filters = `sourceId eq ${filterValue(sourceId)} and nativeIdentity eq ${filterValue(nativeIdentity)}`;
    const res = await this.call(
      req,
      (ax, o) => new AccountsApi(this.configuration, undefined, ax).listAccounts({ limit: 1, filters }, o),
      opts,
    );
    const first = asArray(res.data, req)[0];
    return first === undefined ? undefined : toAccount(first);
  }

  async *searchIdentities(query: string, opts?: CallOptions): AsyncIterable<PlatformIdentity> {
    const req: PlatformRequest = { method: 'POST', endpoint: ENDPOINT.search, idempotent: true };
    for await (const raw of searchAfterPages(
      this.identityPage,
      (doc: unknown) => String((doc as { id?: unknown }).id ?? ''),
      async (searchAfter, limit) => {
        const search: Search = {
          ...identitySearch(query === '' ? '*' : query),
          sort: ['id'],
          ...(searchAfter ? { searchAfter } : {}),
        };
        const res = await this.call(
          req,
          (ax, o) => new SearchApi(this.configuration, undefined, ax).searchPost({ search, limit }, o),
          opts,
        );
        return asArray(res.data, req);
      },
    )) {
      yield toIdentity(raw);
    }
  }

  async getIdentity(id: string, opts?: CallOptions): Promise<PlatformIdentity | undefined> {
    const req: PlatformRequest = { method: 'POST', endpoint: ENDPOINT.search, idempotent: true };
    const search = identitySearch(`id:${filterValue(id)}`);
    const res = await this.call(
      req,
      (ax, o) => new SearchApi(this.configuration, undefined, ax).searchPost({ search, limit: 1 }, o),
      opts,
    );
    const first = asArray(res.data, req)[0];
    return first === undefined ? undefined : toIdentity(first);
  }

  async startAggregation(sourceId: string, opts?: CallOptions): Promise<PlatformTask> {
    // Starting twice would start two aggregations: retried only when certainly not sent, or on 429.
    const req: PlatformRequest = { method: 'POST', endpoint: ENDPOINT.loadAccounts, idempotent: false };
    const res = await this.call(
      req,
      (ax, o) => new SourcesBetaApi(this.configuration, undefined, ax).importAccounts({ sourceId }, o),
      opts,
    );
    const task = toTask((res.data as { task?: unknown }).task);
    if (!task.id)
      throw new FusionError('PLATFORM_REQUEST_FAILED', `Platform API ${req.method} ${req.endpoint} started no task`, {
        ...req,
        status: res.status,
      });
    return task;
  }

  async getTask(taskId: string, opts?: CallOptions): Promise<PlatformTask> {
    const req: PlatformRequest = { method: 'GET', endpoint: ENDPOINT.taskStatus, idempotent: true };
    const res = await this.call(
      req,
      (ax, o) => new TaskManagementBetaApi(this.configuration, undefined, ax).getTaskStatus({ id: taskId }, o),
      opts,
    );
    return toTask(res.data);
  }
}
