/**
 * Every error the product raises on purpose is a FusionError with a stable code, so the api
 * can map it to a status, metrics can count it by code, and tests can assert on it.
 */
export type FusionErrorCode =
  | 'CONFIG_INVALID'
  | 'COMMAND_UNKNOWN'
  | 'COMMAND_NOT_IMPLEMENTED'
  | 'COMMAND_CANCELLED'
  | 'COMMAND_TIMEOUT'
  | 'INPUT_INVALID'
  | 'PLATFORM_UNAUTHORIZED'
  | 'PLATFORM_FORBIDDEN'
  | 'PLATFORM_RATE_LIMITED'
  | 'PLATFORM_NOT_FOUND'
  | 'PLATFORM_REQUEST_FAILED'
  | 'PLATFORM_TIMEOUT'
  | 'SOURCE_NOT_FOUND'
  | 'AGGREGATION_IN_PROGRESS'
  | 'AGGREGATION_STALE_FLAG'
  | 'AGGREGATION_LOCK_LOST'
  | 'AGGREGATION_FAILED'
  | 'TEMPLATE_ERROR'
  | 'UNIQUE_EXHAUSTED'
  | 'ACCOUNT_NOT_FOUND'
  | 'UNSUPPORTED_CHANGE'
  | 'PROXY_UNAUTHORIZED'
  | 'PROXY_AUTH_THROTTLED'
  | 'PROXY_CONNECTION_FAILED'
  | 'PROXY_TIMEOUT'
  | 'PROXY_TLS_FAILED'
  | 'PROXY_BAD_RESPONSE'
  | 'PROXY_SERVER_ERROR'
  | 'PROXY_STREAM_ABORTED'
  | 'QUEUE_UNAVAILABLE'
  | 'SERVER_SHUTTING_DOWN'
  | 'MATCHING_INVALID';

export class FusionError extends Error {
  readonly code: FusionErrorCode;
  /** Structured, secret-free details for logs and tests. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: FusionErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FusionError';
    this.code = code;
    this.details = details;
  }
}

export function isFusionError(e: unknown, code?: FusionErrorCode): e is FusionError {
  return e instanceof FusionError && (code === undefined || e.code === code);
}

/** A message safe to show an operator, whatever was thrown. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
