import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorCode } from '../../errors/error-codes';
import fp from 'fastify-plugin';

/**
 * `Expect: 100-continue`: Node answers `100 Continue` to every such request unless someone listens
 * for it. A client that declared a body over the limit must get the 413 instead, before it uploads
 * a byte; every other request continues as usual.
 */
export const expectContinuePlugin = fp(
  async (app, opts: { bodyLimit: number }) => {
    const server = app.server;
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.bodyLimit) {
        const body = JSON.stringify({
          error: `request body is larger than ${opts.bodyLimit} bytes (BODY_LIMIT_BYTES)`,
          code: 'BODY_TOO_LARGE' satisfies ErrorCode,
        });
        res.writeHead(413, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
          connection: 'close',
        });
        res.end(body);
        return;
      }
      res.writeContinue();
      server.emit('request', req, res);
    });
  },
  { name: 'fusion-expect-continue', fastify: '5.x' },
);
