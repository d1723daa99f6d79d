import type { FastifyError } from 'fastify';
import { errorMessage, isFusionError, type FusionErrorCode } from '../../core/errors';
import { errorsTotal } from '../../queue/metrics';
import { globalPlugin } from './global-plugin';

const STATUS_BY_CODE: Partial<Record<FusionErrorCode, number>> = {
  PROXY_UNAUTHORIZED: 401,
  PROXY_AUTH_THROTTLED: 429,
  INPUT_INVALID: 400,
  CONFIG_INVALID: 400,
  COMMAND_UNKNOWN: 400,
  QUEUE_UNAVAILABLE: 503,
  SERVER_SHUTTING_DOWN: 503,
  COMMAND_TIMEOUT: 504,
};

function isFastifyError(e: unknown): e is FastifyError {
  return e instanceof Error && typeof (e as Partial<FastifyError>).statusCode === 'number';
}

/** Fastify's own messages, reworded where an operator needs to know what to change. */
function fastifyMessage(e: FastifyError, bodyLimit: number): string {
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return `request body is larger than ${bodyLimit} bytes (BODY_LIMIT_BYTES)`;
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return `unsupported Content-Type: send application/json`;
  return e.message;
}

/**
 * The one error handler: every failure before the first byte of a response becomes
 * `{"error": message}` with a status from the error's code. Errors after the first byte never
 * get here (the stream is aborted instead).
 */
export const errorHandlerPlugin = globalPlugin<{ bodyLimit: number }>(async (app, opts) => {
  app.setErrorHandler((error: unknown, request, reply) => {
    let status = 500;
    let message = errorMessage(error);
    let code = 'UNEXPECTED';
    if (isFusionError(error)) {
      status = error.details.phase === 'command' ? 500 : (STATUS_BY_CODE[error.code] ?? 500);
      code = error.code;
      const retryAfterMs = error.details.retryAfterMs;
      if (typeof retryAfterMs === 'number') reply.header('retry-after', String(Math.ceil(retryAfterMs / 1000)));
    } else if (isFastifyError(error) && error.statusCode !== undefined && error.statusCode < 500) {
      status = error.statusCode;
      message = fastifyMessage(error, opts.bodyLimit);
      code = error.code;
    }
    if (status >= 500) {
      errorsTotal.inc({ component: 'api', code });
      request.log.error({ code, err: message }, 'request failed');
    } else {
      request.log.info({ code, status, err: message }, 'request rejected');
    }
    if (reply.sent || reply.raw.headersSent) return;
    void reply.code(status).type('application/json; charset=utf-8').send({ error: message || 'internal error' });
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: `no route for ${request.method} ${request.url.split('?')[0]}` });
  });
}, 'fusion-error-handler');
