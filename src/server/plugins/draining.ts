import type { ErrorCode } from '../../errors/error-codes';
import type { ShutdownState } from '../shutdown-state';
import fp from 'fastify-plugin';

/** Answered while draining: liveness and scrapes still work, nothing new starts. */
const STILL_SERVED = new Set(['/healthz', '/metrics']);

/**
 * While the server drains (SIGTERM, before the listener closes) every new request but the
 * liveness probe and /metrics is answered `503 SERVER_SHUTTING_DOWN` and its connection closed:
 * a client or load balancer learns at once to go elsewhere, and /readyz takes the pod out of
 * rotation.
 */
export const drainingPlugin = fp(
  async (app, opts: { state: ShutdownState }) => {
    // After the body is read: answering earlier would leave an upload unread, and closing a socket
    // with unread bytes resets it, so the client would see a reset instead of the 503.
    app.addHook('preHandler', async (request, reply) => {
      if (!opts.state.draining || STILL_SERVED.has(request.url.split('?')[0]!)) return;
      return reply
        .code(503)
        .header('connection', 'close')
        .header('retry-after', '1')
        .send({
          error:
            'the proxy server is shutting down and takes no new commands; run the command again (another instance takes it)',
          code: 'SERVER_SHUTTING_DOWN' satisfies ErrorCode,
        });
    });
  },
  { name: 'fusion-draining', fastify: '5.x' },
);
