import { FusionError } from '../../core/errors';
import fp from 'fastify-plugin';

/**
 * HTTP/1.1 requires a Host header. Node refuses a request without one by itself, with a bare 400
 * and no body; the server lets such requests through (`requireHostHeader: false`) so this hook
 * can refuse them the way every other bad request is refused: a JSON error with a table code.
 */
export const requireHostPlugin = fp(
  async (app) => {
    app.addHook('onRequest', async (request) => {
      if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && !request.headers.host) {
        throw new FusionError('INPUT_INVALID', 'an HTTP/1.1 request needs a Host header');
      }
    });
  },
  { name: 'fusion-require-host', fastify: '5.x' },
);
