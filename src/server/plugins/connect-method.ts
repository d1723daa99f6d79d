import type { Duplex } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import type { ErrorCode } from '../../errors/error-codes';

/**
 * Node hands a CONNECT request to the server's 'connect' event and, with no listener, destroys
 * the socket: the client gets no answer at all. This server is no tunnel: answer it like any
 * other method the endpoint does not take (405, Allow: POST, a JSON error), then close.
 */
export const connectMethodPlugin = fp(
  async (app) => {
    const refuse = (_req: IncomingMessage, socket: Duplex): void => {
      const body = JSON.stringify({
        error: 'CONNECT is not allowed: this server is not a tunnelling proxy; send the command as a POST',
        code: 'METHOD_NOT_ALLOWED' satisfies ErrorCode,
      });
      socket.on('error', () => undefined);
      socket.end(
        'HTTP/1.1 405 Method Not Allowed\r\n' +
          'allow: POST\r\n' +
          'content-type: application/json; charset=utf-8\r\n' +
          `content-length: ${Buffer.byteLength(body)}\r\n` +
          'connection: close\r\n\r\n' +
          body,
      );
    };
    app.server.on('connect', refuse);
    app.addHook('onClose', async () => void app.server.off('connect', refuse));
  },
  { name: 'fusion-connect-method', fastify: '5.x' },
);
