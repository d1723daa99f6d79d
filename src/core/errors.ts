import type { ErrorCode } from '../errors/error-codes';

/**
 * Every error the product raises on purpose is a FusionError with a stable code from the one
 * table (src/errors/error-codes.ts), so the api maps it to a status, the connector to the SDK's
 * error type, metrics count it by code, and tests assert on it.
 */
export type FusionErrorCode = Exclude<ErrorCode, 'UNEXPECTED'>;

export class FusionError extends Error {
  readonly code: FusionErrorCode;
  /** Structured, secret-free details for logs and tests. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: FusionErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
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
