import pino, { type Logger as PinoLogger, type DestinationStream } from 'pino';
import { REDACTED, SECRET_KEY_NAMES } from '../secrets/redaction';
import { currentLogContext } from './log-context';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

/**
 * Secret paths pino removes from every record. Keys are matched at any of the first levels
 * an object is likely to be logged at (a config, a request body, an error's details).
 */
const REDACT_PATHS: string[] = (() => {
  const keys = SECRET_KEY_NAMES;
  const prefixes = ['', '*.', '*.*.', 'config.', 'body.config.', 'req.headers.'];
  // An HTTP client error nested in a logged object keeps its request (bearer token, form body).
  const nestedHttpError = [
    'config.headers.Authorization',
    'config.headers.authorization',
    'config.data',
    'request',
  ].flatMap((k) => [`*.${k}`, `*.*.${k}`]);
  return [...prefixes.flatMap((p) => keys.map((k) => `${p}${k}`)), ...nestedHttpError];
})();

/**
 * Errors are logged as name, message, code, status and stack only. An HTTP client error (axios)
 * carries the request's headers (the bearer token) and body (client credentials) in `config`
 * and `request`: those never reach a log line, whatever a call site passes.
 */
function safeError(e: unknown): Record<string, unknown> {
  if (!(e instanceof Error)) {
    // An error already reduced to {message, code} (String() of it would log "[object Object]").
    if (e !== null && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') {
      const { message, code } = e as { message: string; code?: unknown };
      return code === undefined ? { message } : { message, code };
    }
    return { message: String(e) };
  }
  const x = e as Error & { code?: unknown; status?: unknown; response?: { status?: unknown } };
  const out: Record<string, unknown> = { type: x.name, message: x.message };
  if (x.code !== undefined) out.code = x.code;
  const status = x.status ?? x.response?.status;
  if (status !== undefined) out.status = status;
  if (x.stack) out.stack = x.stack;
  return out;
}

/** Request lines keep the path only: a query string may carry a credential (a gateway key). */
function safeRequest(req: { method?: string; url?: string; id?: unknown; ip?: string }): Record<string, unknown> {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? req.url.split('?')[0] : req.url,
    id: req.id,
    remoteAddress: req.ip,
  };
}

export function createLogger(
  opts: { level?: LogLevel; destination?: DestinationStream; name?: string } = {},
): PinoLogger {
  return pino(
    {
      name: opts.name ?? 'fusion-proxy',
      level: opts.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      serializers: { err: safeError, error: safeError, req: safeRequest },
      // Request/job id and command on every line, without threading a child logger everywhere.
      mixin: () => ({ ...currentLogContext() }),
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination,
  );
}
