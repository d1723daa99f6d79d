import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { FusionError, errorMessage, isFusionError } from '../../core/errors';
import { formatStreamErrorLine } from '../../errors/stream-error-line';
import { keepsStatus, type ErrorCode } from '../../errors/error-codes';
import { runWithLogContext } from '../../observability/log-context';
import type { CommandDispatcher, OutputChunk } from '../../dispatch/command-dispatcher';
import { withHeartbeat } from '../heartbeat';
import { activeStreams, initProxyRouteSeries, streamBytes, streamItems } from '../metrics';
import type { ProxyAuth } from '../proxy-auth';
import { readProxyBody, toProxyCommand } from '../proxy-request';
import { resetConnection } from '../reset-connection';
import type { ShutdownState } from '../shutdown-state';

/**
 * Marks an error raised while the command ran, so the error handler answers 500 for a failed
 * command (a platform error, a template error). Queue outages and timeouts keep their own status,
 * and so does a request that is itself wrong (invalid settings or input: 400).
 */
function commandFailure(e: unknown): unknown {
  if (!isFusionError(e) || keepsStatus(e.code)) return e;
  return new FusionError(e.code, e.message, { ...e.details, phase: 'command' }, { cause: e });
}

export interface ProxyRouteOptions {
  [key: string]: unknown;
  path: string;
  dispatcher: CommandDispatcher;
  auth: ProxyAuth;
  heartbeatIntervalMs: number;
  /** Once the server is closing, how long open streams may go on before they are aborted. */
  shutdownGraceMs: number;
  /** Open commands are tracked here, so the server's drain can wait for them and stop the rest. */
  shutdown: ShutdownState;
}

/**
 * POST <PROXY_PATH>: authenticate, validate, dispatch, stream NDJSON. The first chunk (or a
 * heartbeat) is awaited before the status line is written, so a command that fails at once
 * still gets a JSON error; once bytes are out, a failure destroys the socket (no terminating
 * chunk) and the client cannot mistake a partial result for a complete one.
 */
export const proxyRoute: FastifyPluginAsync<ProxyRouteOptions> = async (app, opts) => {
  // Open requests are tracked so a shutdown can end them: a job nobody will start (its worker is
  // stopping too) or a long aggregation must not hold the process past its grace period. A close
  // without a drain first (tests, embedding) still gets the grace period.
  let graceTimer: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    graceTimer = setTimeout(() => opts.shutdown.stopAll(), opts.shutdownGraceMs);
    graceTimer.unref();
  });
  app.addHook('onClose', async () => clearTimeout(graceTimer));

  // Other methods on the endpoint: a 405 that says what is allowed, not a 404 that suggests a wrong path.
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'],
    url: opts.path,
    handler: async (request, reply) =>
      reply
        .code(405)
        .header('allow', 'POST')
        .send({
          error: `${request.method} is not allowed on the proxy endpoint: send the command as a POST`,
          code: 'METHOD_NOT_ALLOWED' satisfies ErrorCode,
        }),
  });

  // A compressed body would reach the JSON parser as bytes and read as "not valid JSON": say what is wrong.
  const refuseEncodedBody = async (request: FastifyRequest): Promise<void> => {
    const encoding = request.headers['content-encoding'];
    if (encoding && encoding.toLowerCase() !== 'identity') {
      throw new FusionError(
        'UNSUPPORTED_MEDIA_TYPE',
        `request bodies with Content-Encoding "${encoding}" are not accepted: send plain, uncompressed application/json`,
      );
    }
  };

  initProxyRouteSeries(opts.path, opts.dispatcher.mode);
  app.post(opts.path, { onRequest: refuseEncodedBody }, async (request, reply) => {
    const shape = readProxyBody(request.body);
    opts.auth.verify(request.ip, shape.password);
    const cmd = toProxyCommand(shape, request.id);
    return runWithLogContext({ requestId: request.id, command: cmd.type }, async () => {
      const controller = new AbortController();
      const untrack = opts.shutdown.track(controller);
      reply.raw.on('close', () => {
        untrack();
        if (!reply.raw.writableFinished) controller.abort();
      });
      // The client may have gone while the body was read and checked: 'close' has fired already.
      if (request.raw.socket?.destroyed) controller.abort();
      const source = withHeartbeat(opts.dispatcher.dispatch(cmd, controller.signal), opts.heartbeatIntervalMs);
      // However the response ends, the source is closed, so the dispatcher's clean-up runs (cancel the
      // command, stop renewing its reader lease). body() below does it when the client leaves mid-stream,
      // but a response destroyed before body() takes its first step (the client left while the first
      // chunk was on its way) gets an unstarted generator returned by Readable.from: its finally never
      // runs. A source already finished ignores this; one still being read finishes that read first.
      reply.raw.on('close', () => void source.return(undefined).catch(() => undefined));
      const first = await source.next().catch((e: unknown) => {
        // Stopped by the shutdown, whatever the dispatcher reports: say so, so the caller retries.
        if (isFusionError(controller.signal.reason, 'SERVER_SHUTTING_DOWN')) throw controller.signal.reason;
        throw commandFailure(e);
      });
      const mode = opts.dispatcher.mode;
      activeStreams.inc();
      let closed = false;
      const settle = (): void => {
        if (closed) return;
        closed = true;
        activeStreams.dec();
      };
      reply.raw.on('close', settle);
      async function* body(): AsyncGenerator<string | Buffer> {
        let next: IteratorResult<OutputChunk> = first;
        try {
          while (!next.done) {
            streamBytes.inc({ mode }, next.value.data.length);
            if (next.value.items > 0) streamItems.inc({ mode }, next.value.items);
            yield next.value.data;
            next = await source.next();
          }
        } catch (e) {
          // Why it failed, as a last line only our client reads (see stream-error-line.ts); it is
          // handed on only if the client still reads. Fastify logs the error (with its code) once
          // the stream fails; here only the line and the reset.
          const code = isFusionError(e) ? e.code : 'UNEXPECTED';
          yield formatStreamErrorLine({ code, error: errorMessage(e) || 'the command failed' });
          await resetConnection(reply.raw.socket);
          throw e;
        } finally {
          // The client left while this generator waited on it (the response stream was destroyed and
          // closed us early): close the source too, so the dispatcher's clean-up runs now (cancel the
          // command, free the worker slot, the run lock and the result stream) instead of at the timeout.
          if (!next.done) await source.return(undefined).catch(() => undefined);
        }
      }
      return reply
        .code(200)
        .header('content-type', 'application/x-ndjson; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(Readable.from(body(), { objectMode: true, highWaterMark: 1 }));
    });
  });
};
