import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from './global-plugin';

/**
 * Once the server is closing, a keep-alive connection is closed as soon as its response is
 * done: open streams finish normally, and close() does not wait for clients' idle timeouts.
 */
export const gracefulClosePlugin: FastifyPluginAsync = globalPlugin(async (app) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onResponse', async (request) => {
    if (closing) request.raw.socket?.end();
  });
}, 'fusion-graceful-close');
