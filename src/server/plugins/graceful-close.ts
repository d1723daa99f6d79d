import type { ShutdownState } from '../shutdown-state';
import fp from 'fastify-plugin';

/**
 * Once the server is draining or closing, a keep-alive connection is closed as soon as its response is
 * done: open streams finish normally, and close() does not wait for clients' idle timeouts.
 */
export const gracefulClosePlugin = fp(
  async (app, opts: { state: ShutdownState }) => {
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onResponse', async (request) => {
      if (closing || opts.state.draining) request.raw.socket?.end();
    });
  },
  { name: 'fusion-graceful-close', fastify: '5.x' },
);
