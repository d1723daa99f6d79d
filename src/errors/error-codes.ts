/**
 * The one table of error codes. Every deliberate failure carries one of these codes; the proxy
 * server's status mapping, the connector's SDK error types, the proxy client's reading of a
 * server error and `docs/errors.md` are all derived from it, so a code means the same thing in
 * direct mode, through the proxy, in metrics and in the docs.
 *
 * Plain data on purpose: `core` imports it, and it imports nothing.
 */

/** The platform's error types (`ConnectorErrorType` of @sailpoint/connector-sdk). */
export type SdkErrorType = 'generic' | 'notFound';

/** Who raises the code: tells an operator which log to read. */
export type ErrorOrigin = 'core' | 'platform' | 'server' | 'proxy-client' | 'connector';

export interface ErrorCodeInfo {
  /** HTTP status of the proxy server's JSON error when the code is raised before the command ran. */
  readonly status: number;
  /** Keeps `status` even when raised while the command ran (otherwise such a failure answers 500). */
  readonly transport?: true;
  /**
   * The request itself is wrong (its configuration or input): keeps its 4xx `status` when the
   * command finds it, since running it again unchanged fails the same way.
   */
  readonly requestFault?: true;
  readonly sdkType: SdkErrorType;
  /** Running the same command again, unchanged, may succeed. */
  readonly retryable: boolean;
  readonly origin: ErrorOrigin;
  readonly meaning: string;
  readonly remedy: string;
}

const row = (
  status: number,
  origin: ErrorOrigin,
  retryable: boolean,
  meaning: string,
  remedy: string,
  extra: { sdkType?: SdkErrorType; transport?: true; requestFault?: true } = {},
): ErrorCodeInfo => ({
  status,
  origin,
  retryable,
  meaning,
  remedy,
  sdkType: extra.sdkType ?? 'generic',
  ...(extra.transport ? { transport: true } : {}),
  ...(extra.requestFault ? { requestFault: true } : {}),
});

/** Whether a code keeps its table status when a running command raised it (else such a failure answers 500). */
export function keepsStatus(code: ErrorCode): boolean {
  const info: ErrorCodeInfo = ERROR_CODES[code];
  return info.transport === true || info.requestFault === true;
}

export const ERROR_CODES = {
  CONFIG_INVALID: row(
    400,
    'core',
    false,
    'The connector configuration has invalid or missing settings; the message lists each field, its value and what is allowed.',
    'Correct the listed settings on the source (docs/configuration.md).',
    { requestFault: true },
  ),
  INPUT_INVALID: row(
    400,
    'server',
    false,
    'The command input or the request body is malformed.',
    'Send `{type, input, config}` as JSON with the input the command expects.',
    { requestFault: true },
  ),
  BODY_TOO_LARGE: row(
    413,
    'server',
    false,
    'The request body is larger than BODY_LIMIT_BYTES.',
    'Raise BODY_LIMIT_BYTES on the server, or send a smaller configuration.',
  ),
  UNSUPPORTED_MEDIA_TYPE: row(
    415,
    'server',
    false,
    'The request body is not `application/json`, or it is compressed (`Content-Encoding`).',
    'Send the body as plain, uncompressed `application/json`.',
  ),
  METHOD_NOT_ALLOWED: row(
    405,
    'server',
    false,
    'The proxy endpoint takes POST only (the answer carries `Allow: POST`).',
    'Send the command as a POST with a JSON body.',
  ),
  ROUTE_NOT_FOUND: row(
    404,
    'server',
    false,
    'Nothing listens on that method and path.',
    'POST to the path of the Proxy URL (PROXY_PATH on the server).',
  ),
  COMMAND_UNKNOWN: row(
    400,
    'server',
    false,
    'The `type` is not one of the nine commands.',
    'Use one of the std:* commands listed in the spec.',
  ),
  COMMAND_NOT_IMPLEMENTED: row(
    501,
    'core',
    false,
    'The command exists in the spec but not in this build.',
    'Upgrade fusion-proxy.',
  ),
  COMMAND_CANCELLED: row(
    499,
    'core',
    true,
    'The command was stopped because its caller went away or it was cancelled.',
    'Run the command again; nothing was committed after the cancel.',
    // The caller's own doing, not a failure of the command: never a 500 or an error of the server.
    { transport: true },
  ),
  COMMAND_TIMEOUT: row(
    504,
    'server',
    true,
    'No worker started the command, or a running command showed no progress, within REQUEST_TIMEOUT_MS.',
    'Check that workers are running (ROLE=worker pods, queue depth), then run again.',
    { transport: true },
  ),
  QUEUE_UNAVAILABLE: row(
    503,
    'server',
    true,
    'The proxy server cannot reach Redis, so the command was not queued.',
    'Check REDIS_URL and that Redis is up; then run again.',
    { transport: true },
  ),
  QUEUE_RESULT_LOST: row(
    502,
    'server',
    false,
    'The command was queued, then its result could not be read (the api lost Redis): it may have run, in part or in full.',
    'Check Redis; before running the command again, check whether it took effect (an aggregation can simply run again).',
    { transport: true },
  ),
  SERVER_SHUTTING_DOWN: row(
    503,
    'server',
    true,
    'The proxy server is shutting down and did not finish the command.',
    'Run the command again; another pod takes it.',
    { transport: true },
  ),
  RATE_LIMITER_UNAVAILABLE: row(
    500,
    'platform',
    true,
    'The shared platform rate limiter (Redis) could not be reached while the command ran; it stopped before the next platform call.',
    'Check REDIS_URL and that Redis is up; run again.',
  ),
  PLATFORM_UNAUTHORIZED: row(
    500,
    'platform',
    false,
    'The platform rejected the client credentials (HTTP 401).',
    'Check the Personal access token id and secret and that the token is not revoked.',
  ),
  PLATFORM_FORBIDDEN: row(
    500,
    'platform',
    false,
    'The platform refused a call for lack of scope or rights (HTTP 403).',
    'Give the personal access token the scopes named in the message.',
  ),
  PLATFORM_RATE_LIMITED: row(
    500,
    'platform',
    true,
    'The platform kept answering 429 after the retries.',
    'Lower Requests per second, or run when the tenant is less busy.',
  ),
  PLATFORM_NOT_FOUND: row(
    500,
    'platform',
    false,
    'A platform object the command needs does not exist (HTTP 404).',
    'Check the ids and names in the configuration (sources, the connector instance).',
  ),
  PLATFORM_REQUEST_FAILED: row(
    500,
    'platform',
    true,
    'A platform call failed (5xx, network error or an unexpected answer) after its retries.',
    'Check the Platform API URL and the platform status; run again.',
  ),
  PLATFORM_UNREACHABLE: row(
    500,
    'platform',
    false,
    'The Platform API URL could not be reached (no such host, connection refused, TLS failure) or what answers there is not the platform API.',
    'Correct the Platform API URL (https://<tenant>.api.identitynow.com, no path) and check DNS, the firewall and any egress proxy between the connector or proxy server and the platform.',
  ),
  PLATFORM_TIMEOUT: row(
    500,
    'platform',
    true,
    'A platform call, with its retries, did not finish within Provisioning timeout.',
    'Raise Provisioning timeout or lower the load; run again.',
  ),
  SOURCE_NOT_FOUND: row(
    500,
    'core',
    false,
    "A source named in Authoritative account sources (or the connector's own source) does not exist.",
    'Use the exact, case-sensitive source names the message lists; check spConnectorInstanceId.',
  ),
  AGGREGATION_IN_PROGRESS: row(
    500,
    'core',
    true,
    'Another aggregation of the same source holds the run lock.',
    'Wait for it to finish, then run again.',
  ),
  AGGREGATION_STALE_FLAG: row(
    500,
    'core',
    true,
    'A processing flag left by a run that did not finish, and not by this deployment (another one sharing the source, or from before a Redis wipe), was found and cleared.',
    'Confirm no other aggregation runs, then run again: the next run proceeds.',
  ),
  AGGREGATION_LOCK_LOST: row(
    500,
    'core',
    true,
    'The aggregation lost its run lock (Redis restarted or the lock expired) and stopped before persisting more.',
    'Check Redis health; run again.',
  ),
  AGGREGATION_FAILED: row(
    500,
    'core',
    false,
    'A forced source aggregation failed or timed out.',
    "Read the source's aggregation task on the platform; raise Provisioning timeout if it was slow.",
  ),
  TEMPLATE_ERROR: row(
    500,
    'core',
    false,
    'A Velocity expression of an Attribute Definition failed for an account (the message names attribute, expression, account and kind).',
    'Fix the expression, or guard missing attributes with #if.',
  ),
  UNIQUE_EXHAUSTED: row(
    500,
    'core',
    false,
    'No free unique value was found within Maximum attempts.',
    'Raise Maximum attempts or make the expression more varied.',
  ),
  MATCHING_INVALID: row(
    400,
    'core',
    false,
    'The Matching Settings are invalid.',
    'Correct the matching settings named in the message (docs/matching.md).',
    { requestFault: true },
  ),
  REVIEW_FLOOD: row(
    409,
    'core',
    false,
    'Matching would have sent more than matching.maxReviewShare of the new accounts to review; the run stopped before creating any review form or notification.',
    'Check the matching settings with `fusion-proxy match --report` (an attribute that matches everyone, a threshold too low); for a first aggregation of a source whose accounts mostly belong to existing identities, raise matching.maxReviewShare for that run (1 switches the guard off).',
  ),
  MATCHING_SHARD_FAILED: row(
    500,
    'server',
    true,
    "A matching child job of a sharded aggregation failed after its retries, or its run's data in Redis was gone (expired or removed).",
    'Read the worker logs for the child job named in the message (queue <QUEUE_NAME>-shards); check Redis memory and eviction, then run the aggregation again.',
  ),
  MATCHING_PARTITION_FAILED: row(
    500,
    'core',
    true,
    'A matching partition of an aggregation decided in partitions failed: its thread (in this worker process or, in queue mode, in the one that took it) threw, ran out of memory or exited, or the run could not hand it its work through Redis. The items already emitted are a prefix of the run; nothing was created twice.',
    "Read the log for the partition's error (in queue mode also the worker logs of queue <QUEUE_NAME>-partitions); where it ran out of memory raise the memory limit or lower MATCHING_THREADS (or turn MATCHING_PARTITIONS off), then run the aggregation again.",
  ),
  ACCOUNT_NOT_FOUND: row(
    500,
    'core',
    false,
    "The account the command names does not exist on the connector's source.",
    'Aggregate the source again; the platform removes the stale account.',
    { sdkType: 'notFound' },
  ),
  UNSUPPORTED_CHANGE: row(
    500,
    'core',
    false,
    'The update asks for a change the connector refuses (for example a generated unique value).',
    'Change a normal attribute, or let the next aggregation regenerate the value.',
  ),
  ITEM_TOO_LARGE: row(
    500,
    'connector',
    false,
    'One output item is larger than the platform accepts in one send (256 KiB).',
    'Reduce the attributes of the named account (long lists, large values) or leave them out of the mapping.',
  ),
  PROXY_UNAUTHORIZED: row(
    401,
    'server',
    false,
    'The proxy password is wrong or missing; nothing ran.',
    'Make Proxy password equal to PROXY_PASSWORD on the server (exact, case-sensitive).',
  ),
  PROXY_AUTH_THROTTLED: row(
    429,
    'server',
    true,
    'Too many wrong proxy passwords from this address.',
    'Correct the Proxy password, then wait for Retry-After.',
  ),
  PROXY_CONNECTION_FAILED: row(
    502,
    'proxy-client',
    true,
    'The connector could not connect to the Proxy URL (DNS, refused, reset).',
    'Check the Proxy URL (host, port, http vs https) and the network path from the platform.',
  ),
  PROXY_TIMEOUT: row(
    504,
    'proxy-client',
    true,
    'The proxy server did not answer or went silent for too long.',
    'Check the proxy server and its workers; heartbeats keep a healthy stream alive.',
  ),
  PROXY_TLS_FAILED: row(
    502,
    'proxy-client',
    false,
    'The TLS handshake with the proxy server failed.',
    'Use a certificate the platform trusts and the right scheme (https).',
  ),
  PROXY_BAD_RESPONSE: row(
    502,
    'proxy-client',
    false,
    'The proxy answered something that is not the wire protocol (not JSON/NDJSON, a wrapper object).',
    'Check that the Proxy URL points at fusion-proxy and not at another service.',
  ),
  PROXY_SERVER_ERROR: row(
    500,
    'server',
    false,
    'The proxy server failed the command with an error that has no code of its own (a worker stopped, an unreadable job), or answered an error status without a known code.',
    'Read the message and the proxy server logs for the job id; run again.',
  ),
  PROXY_STREAM_ABORTED: row(
    502,
    'proxy-client',
    true,
    'The proxy server broke off a started response: the command failed part-way, nothing is complete.',
    'Read the message (and the proxy server logs for the job id); run again.',
  ),
  UNEXPECTED: row(
    500,
    'server',
    false,
    'An error without a code: a defect.',
    'Report it with the log line of the same job id.',
  ),
} as const satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}
