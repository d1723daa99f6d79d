import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { REDACTED, isSecretKey } from '../secrets/redaction';
import { hasScope } from './auth';
import { parseBody } from './body-parser';
import type { RouteDef, SimContext, SimRequest, SimResponse } from './context';
import { SimHttpError, platformErrorBody } from './errors';
import type { FaultAction, FaultInjector } from './faults';

interface RequestInfo {
  start: number;
  template: string;
  clientId?: string;
}

const info = new WeakMap<FastifyRequest, RequestInfo>();

function flatQuery(q: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (q && typeof q === 'object') {
    for (const [k, v] of Object.entries(q as Record<string, unknown>)) {
      const first = Array.isArray(v) ? v[0] : v;
      // The request log is test-visible: never keep a credential a client put in the query.
      if (first !== undefined) out[k] = isSecretKey(k) ? REDACTED : String(first);
    }
  }
  return out;
}

function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function sendError(
  reply: FastifyReply,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply.code(status).headers(headers).type('application/json').send(platformErrorBody(status, text));
}

/** Status logged for a request whose client went away during injected latency (nginx's convention). */
const CLIENT_CLOSED = 499;

/**
 * Waits `ms`, or less when the client closes the connection first. Resolves true when the
 * client went away: its request is then not handled at all (a cancelled request leaves no trace
 * but the log entry), and no timer outlives it.
 */
function delay(ms: number, reply: FastifyReply): Promise<boolean> {
  const res = reply.raw;
  if (res.destroyed || res.writableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(false);
    }, ms);
    res.once('close', onClose);
  });
}

/** Waits for FaultInjector.releaseHeld(); resolves true when the client went away first. */
function held(faults: FaultInjector, reply: FastifyReply): Promise<boolean> {
  const res = reply.raw;
  if (res.destroyed || res.writableEnded) return Promise.resolve(true);
  const wait = faults.waitForRelease();
  let left = false;
  const onClose = (): void => {
    left = true;
    wait.cancel();
  };
  res.once('close', onClose);
  return wait.released.then(() => {
    res.off('close', onClose);
    return left;
  });
}

/** Applies an injected fault. Returns true when the request was answered (or dropped) by the fault. */
async function applyFault(
  fault: FaultAction | undefined,
  reply: FastifyReply,
  recordStatus: (status: number) => void,
  faults: FaultInjector,
): Promise<boolean> {
  if (!fault) return false;
  if ((fault.hold && (await held(faults, reply))) || (fault.latencyMs && (await delay(fault.latencyMs, reply)))) {
    recordStatus(CLIENT_CLOSED);
    reply.hijack();
    return true;
  }
  if (fault.drop) {
    // no response, so onResponse never runs: the log gets status 0 here
    recordStatus(0);
    reply.hijack();
    reply.raw.socket?.destroy();
    return true;
  }
  if (fault.status !== undefined) {
    const headers: Record<string, string> = fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {};
    sendError(reply, fault.status, `Injected fault (status ${fault.status})`, headers);
    return true;
  }
  return false;
}

/** Builds the Fastify app: body parsing, the per-request pipeline (fault, auth, rate limit, scope), logging. */
export function buildServer(ctx: SimContext, routes: RouteDef[]): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: 50 * 1024 * 1024,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: 500 },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, raw, done) => {
    try {
      done(null, parseBody(raw as Buffer, req.headers['content-type']));
    } catch (e) {
      done(e as Error, undefined);
    }
  });

  app.addHook('onRequest', async (req) => {
    const url = req.routeOptions.url;
    info.set(req, { start: Date.now(), template: url ? url.replace(/:(\w+)/g, '{$1}') : pathOnly(req.url) });
  });

  const record = (req: FastifyRequest, status: number): void => {
    const i = info.get(req);
    ctx.log.record({
      method: req.method,
      path: pathOnly(req.url),
      template: i?.template ?? pathOnly(req.url),
      status,
      clientId: i?.clientId,
      at: i?.start ?? Date.now(),
      query: flatQuery(req.query),
      durationMs: Date.now() - (i?.start ?? Date.now()),
    });
  };

  app.addHook('onResponse', async (req, reply) => record(req, reply.statusCode));

  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof SimHttpError) return sendError(reply, err.status, err.message, err.headers);
    const status =
      typeof (err as { statusCode?: unknown }).statusCode === 'number'
        ? (err as { statusCode: number }).statusCode
        : 500;
    return sendError(reply, status, status >= 500 ? 'Internal simulator error' : (err as Error).message);
  });

  app.setNotFoundHandler(async (req, reply) => {
    const path = pathOnly(req.url);
    if (
      await applyFault(
        ctx.faults.match(req.method, path, path, undefined),
        reply,
        (status) => record(req, status),
        ctx.faults,
      )
    )
      return reply;
    return sendError(reply, 404, `Resource not found: ${req.method} ${path}`);
  });

  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.template.replace(/\{(\w+)\}/g, ':$1'),
      handler: async (req, reply) => {
        const simReq: SimRequest = {
          method: req.method,
          path: pathOnly(req.url),
          params: (req.params ?? {}) as Record<string, string>,
          query: flatQuery(req.query),
          body: req.body,
          headers: req.headers,
        };
        const i = info.get(req);
        let page: number | undefined;
        try {
          page = route.page?.(simReq);
        } catch {
          page = undefined;
        }
        if (
          await applyFault(
            ctx.faults.match(req.method, route.template, simReq.path, page),
            reply,
            (status) => record(req, status),
            ctx.faults,
          )
        )
          return reply;
        if (route.scope) {
          const check = ctx.auth.check(req.headers.authorization);
          if (!check.ok) return sendError(reply, 401, check.reason);
          simReq.clientId = check.clientId;
          if (i) i.clientId = check.clientId;
          const wait = ctx.limiter.take(check.clientId);
          if (wait > 0) return sendError(reply, 429, 'Rate limit exceeded', { 'retry-after': String(wait) });
          if (!hasScope(check.scopes, route.scope)) {
            return sendError(reply, 403, `The token lacks a scope required for ${req.method} ${route.template}`);
          }
        }
        const res: SimResponse = await route.handler(simReq);
        reply.code(res.status);
        if (res.headers) reply.headers(res.headers);
        if (res.body === undefined) return reply.send();
        return reply.type('application/json').send(JSON.stringify(res.body));
      },
    });
  }
  return app;
}
