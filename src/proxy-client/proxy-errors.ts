import { FusionError, type FusionErrorCode } from '../core/errors';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '../errors/error-codes';
import { isTlsErrorCode } from '../errors/network-codes';
import { redactText } from '../secrets/redaction';

/**
 * The proxy URL as shown to an operator: scheme, host, port and path. User info and the query
 * string are dropped because either may carry a credential.
 */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function errorCode(e: unknown): string | undefined {
  if (e && typeof e === 'object' && 'code' in e) {
    const code = (e as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

function rawMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function isTlsError(e: unknown): boolean {
  const code = errorCode(e);
  if (isTlsErrorCode(code)) return true;
  return /certificate|ssl|tls/i.test(rawMessage(e));
}

/**
 * An https:// URL pointed at a plain-HTTP server: the client's TLS record layer reads the server's
 * HTTP answer (or its silence then close) as a record of an unknown version. OpenSSL says "wrong
 * version number" (or "packet length too long", or "http request" the other way round).
 */
function speaksPlainHttp(e: unknown): boolean {
  const code = errorCode(e);
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') return true;
  return (
    (code === 'EPROTO' || code === undefined) && /wrong version number|packet length too long/i.test(rawMessage(e))
  );
}

/**
 * Turns a socket-level failure (before or during the response) into the spec's proxy-client
 * error rows: connection refused, DNS, TLS handshake, reset. `phase` says whether the response
 * had started, because a reset after the first byte is a truncated result, not a refused connection.
 */
export function networkError(
  e: unknown,
  ctx: { url: string; type: string; secrets: readonly string[]; phase: 'connect' | 'response' },
): FusionError {
  const code = errorCode(e);
  const detail = redactText(rawMessage(e), ctx.secrets);
  const base = { url: ctx.url, command: ctx.type, cause: code ?? 'unknown' };
  if (speaksPlainHttp(e)) {
    return new FusionError(
      'PROXY_TLS_FAILED',
      `The proxy server at ${ctx.url} answered the TLS handshake in plain text: this server speaks plain HTTP, not HTTPS. ` +
        'Use http:// in the Proxy URL, or put TLS in front of the server (an ingress or reverse proxy with a certificate).',
      { ...base, plainHttp: true },
    );
  }
  if (isTlsError(e)) {
    return new FusionError(
      'PROXY_TLS_FAILED',
      `TLS handshake with the proxy server at ${ctx.url} failed: ${detail}${code ? ` (${code})` : ''}. ` +
        'Install a valid certificate and chain on the server, or give the client the CA that signed it.',
      base,
    );
  }
  if (ctx.phase === 'response') {
    return new FusionError(
      'PROXY_STREAM_ABORTED',
      `The proxy server at ${ctx.url} broke off the response to ${ctx.type} (${detail}${code ? `, ${code}` : ''}); ` +
        'the result is incomplete and was not accepted. Read the server logs.',
      base,
    );
  }
  switch (code) {
    case 'ECONNREFUSED':
      return new FusionError(
        'PROXY_CONNECTION_FAILED',
        `Cannot connect to the proxy server at ${ctx.url}: connection refused. Check the URL and port, that the server is running, and the firewall.`,
        base,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      return new FusionError(
        'PROXY_CONNECTION_FAILED',
        `Cannot connect to the proxy server at ${ctx.url}: DNS lookup of the host name failed (${code}). Check the host name in the Proxy URL and DNS from the platform network.`,
        base,
      );
    case 'ECONNRESET':
    case 'EPIPE':
      return new FusionError(
        'PROXY_CONNECTION_FAILED',
        `The proxy server at ${ctx.url} closed the connection before answering (${code}). Check that the URL points at the proxy server (http vs https) and read the server logs.`,
        base,
      );
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return new FusionError(
        'PROXY_CONNECTION_FAILED',
        `Cannot connect to the proxy server at ${ctx.url}: network unreachable (${code}). Check the address and the firewall.`,
        base,
      );
    default:
      return new FusionError(
        'PROXY_CONNECTION_FAILED',
        `Cannot connect to the proxy server at ${ctx.url}: ${detail}${code ? ` (${code})` : ''}.`,
        base,
      );
  }
}

/** The `error` field of a JSON error body, else a short single-line quote of the body. */
function errorBodyMessage(body: string): string {
  const trimmed = body.trim();
  if (!trimmed) return 'no error message in the body';
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const err = (parsed as Record<string, unknown>).error;
      if (typeof err === 'string' && err.trim()) return err.trim();
      if (err && typeof err === 'object' && typeof (err as Record<string, unknown>).message === 'string') {
        return String((err as Record<string, unknown>).message);
      }
    }
  } catch {
    // Not JSON (an HTML page from a gateway, or spcx's plain-text errors): quote it.
  }
  const line = trimmed.replace(/\s+/g, ' ');
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}

/** The server's `code` (from the one error-code table), when the body carries one we know. */
function errorBodyCode(body: string): ErrorCode | undefined {
  try {
    const parsed: unknown = JSON.parse(body.trim());
    const code =
      parsed && typeof parsed === 'object' && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>).code
        : undefined;
    return isErrorCode(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Our server's 413 carries its code; any other 413 comes from something in front of it (an
 * ingress or reverse proxy refusing the body before our server saw it), whose limit is the one to raise.
 */
function tooLargeHint(serverCode: ErrorCode | undefined): string {
  if (serverCode === 'BODY_TOO_LARGE')
    return 'The request (configuration and input) is larger than the server accepts; raise BODY_LIMIT_BYTES on the server.';
  return (
    'The request (configuration and input) was refused as too large by a reverse proxy or ingress in front of the proxy server, ' +
    "not by fusion-proxy: raise that hop's body limit (nginx: client_max_body_size, 1 MB by default; " +
    'ingress-nginx: the nginx.ingress.kubernetes.io/proxy-body-size annotation) to at least BODY_LIMIT_BYTES.'
  );
}

export function statusError(
  status: number,
  body: string,
  ctx: { url: string; type: string; secrets: readonly string[] },
): FusionError {
  // The server's message usually ends a sentence already; the hint appended below starts a new one.
  const message = redactText(errorBodyMessage(body), ctx.secrets).replace(/[.\s]+$/, '');
  const details = { url: ctx.url, command: ctx.type, status, serverError: message };
  if (status === 401) {
    return new FusionError(
      'PROXY_UNAUTHORIZED',
      `The proxy server at ${ctx.url} rejected the proxy password (HTTP 401): ${message}. Make the Proxy password equal to PROXY_PASSWORD on the server (exact, case-sensitive).`,
      details,
    );
  }
  const serverCode = errorBodyCode(body);
  const hint =
    status >= 500
      ? 'Read the proxy server logs.'
      : status === 404 || status === 405
        ? 'Check the path of the Proxy URL (it must be the path the server listens on, PROXY_PATH).'
        : status === 413
          ? tooLargeHint(serverCode)
          : status === 400
            ? 'The server rejected the command or the configuration.'
            : status === 429
              ? 'Correct the Proxy password, then wait for the time the server gives (Retry-After) before the next attempt.'
              : 'Check the Proxy URL and the server.';
  // A code the server raised keeps its meaning here (a missing account stays ACCOUNT_NOT_FOUND, so
  // the platform gets notFound in proxy-client mode as in direct mode); client-side codes and
  // codes without a meaning of their own stay PROXY_SERVER_ERROR.
  const code: FusionErrorCode =
    serverCode && serverCode !== 'UNEXPECTED' && ERROR_CODES[serverCode].origin !== 'proxy-client'
      ? serverCode
      : 'PROXY_SERVER_ERROR';
  return new FusionError(
    code,
    `The proxy server at ${ctx.url} failed to run ${ctx.type} (HTTP ${status}): ${message}. ${hint}`,
    { ...details, ...(serverCode ? { serverCode } : {}) },
  );
}

/**
 * A started response the server broke off, with the reason it gave in its last line
 * (stream-error-line.ts): the server's own code when it is one of ours, so retry decisions and the
 * platform's error type stay those of the real cause.
 */
export function streamFailedError(
  line: { code: string; error: string },
  ctx: { url: string; type: string; secrets: readonly string[]; items: number },
): FusionError {
  const message = redactText(line.error, ctx.secrets).replace(/[.\s]+$/, '');
  const known =
    isErrorCode(line.code) && line.code !== 'UNEXPECTED' && ERROR_CODES[line.code].origin !== 'proxy-client'
      ? line.code
      : undefined;
  return new FusionError(
    known ?? 'PROXY_STREAM_ABORTED',
    `The proxy server at ${ctx.url} failed ${ctx.type} after ${ctx.items} item(s) had been sent: ${message}. The result is incomplete and was not accepted.`,
    { url: ctx.url, command: ctx.type, itemsBeforeFailure: ctx.items, serverCode: line.code, phase: 'stream' },
  );
}
