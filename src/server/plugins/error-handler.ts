import type { FastifyError } from 'fastify';
import { errorMessage, isFusionError } from '../../core/errors';
import { ERROR_CODES, keepsStatus, type ErrorCode } from '../../errors/error-codes';
import { errorsTotal } from '../../observability/error-metrics';
import { drainRequest } from '../drain-request';
import fp from 'fastify-plugin';

function isFastifyError(e: unknown): e is FastifyError {
  return e instanceof Error && typeof (e as Partial<FastifyError>).statusCode === 'number';
}

/** Fastify's own 4xx errors under the table's codes, so a client can tell them apart. */
function fastifyCode(e: FastifyError): ErrorCode {
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'BODY_TOO_LARGE';
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'UNSUPPORTED_MEDIA_TYPE';
  return 'INPUT_INVALID';
}

/** Fastify's own messages, reworded where an operator needs to know what to change. */
function fastifyMessage(e: FastifyError, bodyLimit: number): string {
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return `request body is larger than ${bodyLimit} bytes (BODY_LIMIT_BYTES)`;
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return `unsupported Content-Type: send application/json`;
  return e.message;
}

/**
 * The one error handler: every failure before the first byte of a response becomes
 * `{"error": message, "code": code}` with the status the error-code table gives its code
 * (`error` is what the spec requires; `code` keeps the meaning across the proxy). Errors after the first byte never
 * get here (the stream is aborted instead).
 */
export const errorHandlerPlugin = fp(
  async (app, opts: { bodyLimit: number }) => {
    app.setErrorHandler(async (error: unknown, request, reply) => {
      let status = 500;
      let message = errorMessage(error);
      let code: ErrorCode = 'UNEXPECTED';
      if (isFusionError(error)) {
        const info = ERROR_CODES[error.code];
        status = error.details.phase === 'command' && !keepsStatus(error.code) ? 500 : info.status;
        code = error.code;
        const retryAfterMs = error.details.retryAfterMs;
        if (typeof retryAfterMs === 'number') reply.header('retry-after', String(Math.ceil(retryAfterMs / 1000)));
      } else if (isFastifyError(error) && error.statusCode !== undefined && error.statusCode < 500) {
        status = error.statusCode;
        message = fastifyMessage(error, opts.bodyLimit);
        code = fastifyCode(error);
      }
      if (status >= 500) {
        // A command's own failure was counted where it ran (worker, embedded): one failure, one count.
        if (!(isFusionError(error) && error.details.fromCommand === true)) errorsTotal.inc({ component: 'api', code });
        request.log.error({ code, err: message }, 'request failed');
      } else if (code === 'COMMAND_CANCELLED') {
        // Its client left (or cancelled it): nobody reads this answer, and nothing failed on this side.
        request.log.info({ code, status }, 'request cancelled');
      } else {
        request.log.info({ code, status, err: message }, 'request rejected');
      }
      if (reply.sent || reply.raw.headersSent) return;
      if (code === 'BODY_TOO_LARGE') {
        // The client may still be uploading: read the rest (bounded) so it can read the 413, then close.
        reply.header('connection', 'close');
        if (!(await drainRequest(request.raw))) {
          request.raw.socket?.destroy();
          return;
        }
      }
      return reply
        .code(status)
        .type('application/json; charset=utf-8')
        .send({ error: message || 'internal error', code });
    });

    app.setNotFoundHandler((request, reply) => {
      void reply.code(404).send({
        error: `no route for ${request.method} ${request.url.split('?')[0]}`,
        code: 'ROUTE_NOT_FOUND' satisfies ErrorCode,
      });
    });
  },
  { name: 'fusion-error-handler', fastify: '5.x' },
);
