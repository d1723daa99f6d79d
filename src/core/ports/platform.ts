import type { Logger } from './logger';
import type { ReviewPlatformPort } from './review-platform';
import type { CallOptions, PlatformIdentity } from './platform-common';

export type { CallOptions, PlatformIdentity };

/**
 * What the core needs from the platform API. `src/platform` implements it on top of
 * sailpoint-api-client (token, shared rate limiter, retries, paging); the core never sees HTTP.
 *
 * Contract for every method: failures throw a FusionError (codes PLATFORM_*); a listing either
 * yields every item or throws, never ends early in silence. Listings are streamed: an async
 * iterable that fetches the next page only when the consumer asks for it.
 */

export interface PlatformSource {
  id: string;
  name: string;
  /** False for a managed source whose Enabled setting is off. */
  enabled: boolean;
  authoritative: boolean;
  /** The source's owner identity, when it has one. */
  owner?: { id: string; name: string };
  /** The connector configuration stored on the source (connectorAttributes). */
  connectorAttributes: Record<string, unknown>;
}

export interface PlatformAccount {
  id: string;
  sourceId: string;
  sourceName: string;
  nativeIdentity: string;
  name: string;
  /** The identity this account is correlated with, when it is. */
  identityId?: string;
  disabled: boolean;
  isMachine: boolean;
  attributes: Record<string, unknown>;
  created?: string;
  modified?: string;
}

export interface SchemaAttribute {
  name: string;
  type: 'STRING' | 'LONG' | 'INT' | 'BOOLEAN' | 'DATE';
  multi: boolean;
  entitlement: boolean;
  description?: string;
}

export interface SourceSchema {
  id?: string;
  name: string;
  nativeObjectType: string;
  identityAttribute?: string;
  displayAttribute?: string;
  attributes: SchemaAttribute[];
}

export type TaskState = 'PENDING' | 'RUNNING' | 'SUCCESS' | 'WARNING' | 'ERROR' | 'TERMINATED';

export interface PlatformTask {
  id: string;
  state: TaskState;
  /** Messages reported by the task, for an actionable error on failure. */
  messages: string[];
}

export interface PlatformPort {
  listSources(opts?: CallOptions): AsyncIterable<PlatformSource>;
  getSource(id: string, opts?: CallOptions): Promise<PlatformSource>;
  /** Replace keys of the source's connectorAttributes (used for connector state: counters, flags). */
  patchSourceConnectorAttributes(sourceId: string, values: Record<string, unknown>, opts?: CallOptions): Promise<void>;
  getSourceSchemas(sourceId: string, opts?: CallOptions): Promise<SourceSchema[]>;

  /** Accounts of one source; `filters` is an extra platform filter expression ANDed with the source. */
  listAccounts(
    query: { sourceId: string; filters?: string; limit?: number },
    opts?: CallOptions,
  ): AsyncIterable<PlatformAccount>;
  getAccount(id: string, opts?: CallOptions): Promise<PlatformAccount | undefined>;
  findAccountByNativeIdentity(
    sourceId: string,
    nativeIdentity: string,
    opts?: CallOptions,
  ): Promise<PlatformAccount | undefined>;

  /** Identity search; `query` is the Identity Scope Query (`*` = all). Pages with searchAfter. */
  searchIdentities(query: string, opts?: CallOptions): AsyncIterable<PlatformIdentity>;
  getIdentity(id: string, opts?: CallOptions): Promise<PlatformIdentity | undefined>;

  /** Starts an aggregation of a source and returns its task, whose state can be polled. */
  startAggregation(sourceId: string, opts?: CallOptions): Promise<PlatformTask>;
  getTask(taskId: string, opts?: CallOptions): Promise<PlatformTask>;
}

/** A platform client for the duration of one command; `close()` releases its connections. */
export interface PlatformSession extends PlatformPort {
  close(): void;
  /**
   * Review forms, reviewers and workflows through the same token, rate budget and retries.
   * Optional so that test fakes of the platform need not provide it.
   */
  reviews?(): ReviewPlatformPort;
}

/**
 * Builds the platform session of one command from its configuration (baseurl, clientId,
 * clientSecret and the API-use settings). `src/platform` provides it; the core only calls it.
 * Throws FusionError CONFIG_INVALID for bad settings.
 */
export type PlatformFactory = (
  config: Record<string, unknown>,
  ctx: {
    signal: AbortSignal;
    logger: Logger;
    /**
     * `cleanup`: the few calls that take a run's processing flag down. They must get through even
     * while the shared rate limiter (Redis) is down, so they fall back to this process's budget.
     * `check`: std:test-connection, which proves the credentials: it waits for a fresh answer of the
     * token endpoint (its own request or one under way), never a token the process already holds, then
     * shares it like any other.
     */
    purpose?: 'command' | 'cleanup' | 'check';
  },
) => PlatformSession;
