import type { FastifyPluginAsync } from 'fastify';
import type { ShutdownState } from '../shutdown-state';
import { globalPlugin } from './global-plugin';

/**
 * Once the server is draining or closing, a keep-alive connection is closed as soon as its response is
 * done: open streams finish normally, and close() does not wait for clients' idle timeouts.
 */
export const gracefulClosePlugin: FastifyPluginAsync<{ state: ShutdownState }> = globalPlugin<{ state: ShutdownState }>(
  async (app, opts) => {
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onResponse', async (request) => {
      if (closing || opts.state.draining) request.raw.socket?.end();
    });
  },
  'fusion-graceful-close',
);
