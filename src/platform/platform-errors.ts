import { isAxiosError } from 'axios';
import { FusionError, isFusionError } from '../core/errors';
import { isTlsErrorCode } from '../errors/network-codes';
import { parseRetryAfter } from './retry-after';

/** One platform request as errors and metrics describe it: method and path template, never ids. */
export interface RequestDescriptor {
  method: string;
  endpoint: string;
}

export type FailureKind =
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'not_found'
  | 'server_error'
  | 'client_error'
  | 'network'
  /** Something answered at the Platform API URL, but not the platform API (an HTML page, a 404 token endpoint). */
  | 'not_platform'
  | 'aborted'
  | 'fusion'
  | 'unexpected';

export interface ClassifiedFailure {
  kind: FailureKind;
  status?: number;
  retryAfterMs?: number;
  /** Node/axios error code for network failures (ECONNREFUSED, ECONNRESET, ...). */
  networkCode?: string;
  /** True when the request certainly never reached the server (safe to retry a non-idempotent call). */
  notSent?: boolean;
  /** A network failure no retry can fix: the host does not exist, or its TLS is not one the client trusts. */
  permanent?: boolean;
  /** The platform's own explanation (detailCode / first message), already shortened. */
  platformDetail?: string;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Failures a retry cannot fix: DNS says the host does not exist (EAI_AGAIN, a resolver hiccup, is
 * retried), the URL is malformed, or the TLS handshake failed on the certificate or the protocol.
 */
function isPermanent(code: string): boolean {
  return code === 'ENOTFOUND' || code === 'ERR_INVALID_URL' || isTlsErrorCode(code);
}

/** What a network error code means, in the words an operator checks first. */
function networkCause(code: string | undefined): string {
  if (code === undefined) return 'no response';
  if (code === 'ENOTFOUND') return 'no such host (DNS)';
  if (code === 'EAI_AGAIN') return 'DNS lookup failed (temporary)';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') return 'no answer in time';
  if (code === 'ERR_INVALID_URL') return 'not a valid URL';
  if (code === 'EPROTO' || code === 'ERR_SSL_WRONG_VERSION_NUMBER')
    return 'TLS handshake failed (is it http:// rather than https://?)';
  if (isTlsErrorCode(code)) return 'TLS certificate not trusted';
  return 'no response';
}

function platformDetail(data: unknown): string | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof d.detailCode === 'string') parts.push(d.detailCode);
  if (Array.isArray(d.messages)) {
    const first = d.messages.find(
      (m): m is { text: string } => !!m && typeof m === 'object' && typeof (m as { text?: unknown }).text === 'string',
    );
    if (first) parts.push(first.text);
  }
  if (typeof d.error === 'string') parts.push(d.error);
  if (typeof d.error_description === 'string') parts.push(d.error_description);
  if (typeof d.message === 'string') parts.push(d.message);
  const text = parts.join(': ').replace(/\s+/g, ' ').trim();
  return text === '' ? undefined : text.slice(0, 200);
}

/** What went wrong with one attempt, independent of how the caller reacts to it. */
export function classifyFailure(err: unknown, nowMs: number = Date.now()): ClassifiedFailure {
  if (isFusionError(err)) return { kind: 'fusion' };
  if (isAxiosError(err)) {
    if (err.code === 'ERR_CANCELED') return { kind: 'aborted' };
    const res = err.response;
    if (!res) {
      const code = err.code ?? (err.cause as { code?: string } | undefined)?.code ?? 'ERR_NETWORK';
      return {
        kind: 'network',
        networkCode: code,
        notSent: NOT_SENT_CODES.has(code) || isTlsErrorCode(code),
        permanent: isPermanent(code),
      };
    }
    const status = res.status;
    const detail = platformDetail(res.data);
    const base = { status, platformDetail: detail };
    if (status === 401) return { kind: 'unauthorized', ...base };
    if (status === 403) return { kind: 'forbidden', ...base };
    if (status === 404) return { kind: 'not_found', ...base };
    if (status === 429) {
      const headers = res.headers as Record<string, unknown> | undefined;
      return { kind: 'rate_limited', ...base, retryAfterMs: parseRetryAfter(headers?.['retry-after'], nowMs) };
    }
    if (status >= 500) return { kind: 'server_error', ...base };
    return { kind: 'client_error', ...base };
  }
  if (err instanceof Error && err.name === 'AbortError') return { kind: 'aborted' };
  return { kind: 'unexpected' };
}

/**
 * Scopes the spec requires, by endpoint family. Every message also names sp:scopes:all, the
 * alternative that covers all operations.
 */
function requiredScopes(req: RequestDescriptor): string[] {
  const write = req.method !== 'GET' && !(req.method === 'POST' && req.endpoint === '/v3/search');
  if (req.endpoint.includes('/form-')) return ['sp:forms:manage'];
  if (req.endpoint.includes('/workflows')) return ['sp:workflow:execute'];
  if (req.endpoint.startsWith('/v3/accounts')) return write ? ['sp:accounts:write'] : ['sp:accounts:read'];
  return write ? ['sp:scim:write'] : ['sp:scim:read'];
}

function where(req: RequestDescriptor): string {
  return `${req.method} ${req.endpoint}`;
}

export interface ErrorContext {
  attempts: number;
  requestsPerSecond?: number;
  /** The Platform API URL, named in errors about reaching it. */
  baseurl?: string;
  /** Nothing at the URL has answered this session yet: a network failure then means a wrong or unreachable URL. */
  neverAnswered?: boolean;
}

/** The URL as shown to an operator: no user info, no query. */
function shownBaseurl(baseurl: string | undefined): string {
  if (!baseurl) return 'the Platform API URL (baseurl)';
  try {
    const u = new URL(baseurl);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return JSON.stringify(baseurl.slice(0, 200));
  }
}

/** The typed, actionable error for a request that will not be retried (any more). */
export function toFusionError(
  req: RequestDescriptor,
  f: ClassifiedFailure,
  ctx: ErrorContext,
  original?: unknown,
): FusionError {
  // An AxiosError carries the request headers (the bearer token): never keep it as the cause.
  const cause = isAxiosError(original) ? undefined : original;
  const details = { method: req.method, endpoint: req.endpoint, status: f.status, attempts: ctx.attempts };
  const platformSays = f.platformDetail ? ` (platform: ${f.platformDetail})` : '';
  switch (f.kind) {
    case 'unauthorized':
      return new FusionError(
        'PLATFORM_UNAUTHORIZED',
        `Platform API rejected the credentials for ${where(req)} (HTTP 401): the personal access token id (clientId) or secret (clientSecret) is wrong, or the token was revoked. Correct the token id and secret, or regenerate the token.${platformSays}`,
        details,
        { cause },
      );
    case 'forbidden': {
      const scopes = requiredScopes(req);
      return new FusionError(
        'PLATFORM_FORBIDDEN',
        `Platform API refused ${where(req)} (HTTP 403): the personal access token lacks the required scopes. Grant the token sp:scopes:all, or the specific scope${scopes.length > 1 ? 's' : ''} ${scopes.join(', ')}.${platformSays}`,
        { ...details, requiredScopes: ['sp:scopes:all', ...scopes] },
        { cause },
      );
    }
    case 'rate_limited':
      return new FusionError(
        'PLATFORM_RATE_LIMITED',
        `Platform API kept answering ${where(req)} with HTTP 429 (rate limit) after ${ctx.attempts} attempt(s). Lower "Requests per second"${ctx.requestsPerSecond ? ` (now ${ctx.requestsPerSecond})` : ''}, keep "Enable queue" on, or run fewer aggregations at once.`,
        details,
        { cause },
      );
    case 'not_found':
      return new FusionError(
        'PLATFORM_NOT_FOUND',
        `Platform API found nothing at ${where(req)} (HTTP 404).${platformSays}`,
        details,
        { cause },
      );
    case 'server_error':
    case 'client_error':
      return new FusionError(
        'PLATFORM_REQUEST_FAILED',
        `Platform API request ${where(req)} failed with HTTP ${f.status} after ${ctx.attempts} attempt(s).${platformSays}`,
        details,
        { cause },
      );
    case 'network': {
      const cause = `${networkCause(f.networkCode)}${f.networkCode ? `, ${f.networkCode}` : ''}`;
      if (f.permanent || ctx.neverAnswered) {
        return new FusionError(
          'PLATFORM_UNREACHABLE',
          `Cannot reach the Platform API at ${shownBaseurl(ctx.baseurl)}: ${cause} (${where(req)}, ${ctx.attempts} attempt(s)). Check the Platform API URL (baseurl), DNS, the firewall and any egress proxy.`,
          { ...details, networkCode: f.networkCode },
          { cause },
        );
      }
      return new FusionError(
        'PLATFORM_REQUEST_FAILED',
        `Platform API request ${where(req)} to ${shownBaseurl(ctx.baseurl)} failed without a response (${cause}) after ${ctx.attempts} attempt(s). Check the network path to the platform and run again.`,
        { ...details, networkCode: f.networkCode },
        { cause },
      );
    }
    case 'not_platform':
      return new FusionError(
        'PLATFORM_UNREACHABLE',
        `What answers at ${shownBaseurl(ctx.baseurl)} is not the platform API: ${where(req)} got ${f.status !== undefined ? `HTTP ${f.status}` : 'an answer'} without an access token. Check the Platform API URL (baseurl): https://<tenant>.api.identitynow.com, with no path.${platformSays}`,
        details,
        { cause },
      );
    default:
      return new FusionError(
        'PLATFORM_REQUEST_FAILED',
        `Platform API request ${where(req)} failed: ${original instanceof Error ? original.message.slice(0, 200) : 'unexpected error'}.`,
        details,
        { cause },
      );
  }
}

export function timeoutError(req: RequestDescriptor, timeoutMs: number, attempts: number): FusionError {
  return new FusionError(
    'PLATFORM_TIMEOUT',
    `Platform API request ${where(req)} did not complete within ${Math.round(timeoutMs / 1000)} s (${attempts} attempt(s)); raise "Provisioning timeout" or lower the load on the platform.`,
    { method: req.method, endpoint: req.endpoint, timeoutMs, attempts },
  );
}

/**
 * The caller's signal stopped the request. A signal that fired because a deadline of the caller
 * passed (AbortSignal.timeout: the clean-up session's) is a timeout, not a cancel: nobody cancelled.
 */
export function cancelledError(req: RequestDescriptor, reason?: unknown, attempts = 0): FusionError {
  // A DOMException (AbortSignal.timeout's reason) is not always `instanceof Error` (another realm): by name.
  if ((reason as { name?: unknown } | undefined)?.name === 'TimeoutError') {
    return new FusionError(
      'PLATFORM_TIMEOUT',
      `Platform API request ${where(req)} did not complete within the time its step allows (${attempts} attempt(s)); the platform kept failing or answering slowly.`,
      { method: req.method, endpoint: req.endpoint, attempts },
    );
  }
  return new FusionError('COMMAND_CANCELLED', `Platform API request ${where(req)} was cancelled`, {
    method: req.method,
    endpoint: req.endpoint,
  });
}
