import { randomUUID } from 'node:crypto';

/** The error body the platform returns: `{detailCode, trackingId, messages:[{locale, localeOrigin, text}]}`. */
export interface PlatformErrorBody {
  detailCode: string;
  trackingId: string;
  messages: { locale: string; localeOrigin: string; text: string }[];
}

const DETAIL_CODES: Record<number, string> = {
  400: '400.1 Bad Request Content',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not found',
  405: '405 Method Not Allowed',
  409: '409 Conflict',
  429: '429 Too Many Requests',
  500: '500.0 Internal Fault',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
};

export function platformErrorBody(status: number, text: string): PlatformErrorBody {
  return {
    detailCode: DETAIL_CODES[status] ?? `${status} Error`,
    trackingId: randomUUID().replace(/-/g, ''),
    messages: [{ locale: 'en-US', localeOrigin: 'DEFAULT', text }],
  };
}

/** Thrown by route handlers and helpers; the server turns it into a platform-shaped error reply. */
export class SimHttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'SimHttpError';
    this.status = status;
    this.headers = headers;
  }
}

export const badRequest = (message: string): SimHttpError => new SimHttpError(400, message);
export const notFound = (message: string): SimHttpError => new SimHttpError(404, message);
