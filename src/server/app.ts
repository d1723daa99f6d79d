import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import type { CommandDispatcher } from '../dispatch/command-dispatcher';
import type { ServerEnv } from './env';
import { expectContinuePlugin } from './plugins/expect-continue';
import { requireHostPlugin } from './plugins/require-host';
import { connectMethodPlugin } from './plugins/connect-method';
import { errorHandlerPlugin } from './plugins/error-handler';
import fp from 'fastify-plugin';
import { drainingPlugin } from './plugins/draining';
import { gracefulClosePlugin } from './plugins/graceful-close';
import { httpMetricsPlugin } from './plugins/http-metrics';
import { ProxyAuth } from './proxy-auth';
import { healthRoutes, type ReadinessProbe } from './routes/health';
import { metricsRoute } from './routes/metrics';
import { proxyRoute } from './routes/proxy';
import { ShutdownState } from './shutdown-state';

export type AppEnv = Pick<
  ServerEnv,
  | 'PROXY_PATH'
  | 'BODY_LIMIT_BYTES'
  | 'HEARTBEAT_INTERVAL_MS'
  | 'AUTH_MAX_FAILURES'
  | 'AUTH_FAILURE_WINDOW_MS'
  | 'METRICS_ENABLED'
> & { PROXY_PASSWORD?: string; SHUTDOWN_GRACE_MS?: number; TRUST_PROXY?: ServerEnv['TRUST_PROXY'] };

export interface AppOptions {
  [key: string]: unknown;
  env: AppEnv;
  /** Absent on a worker-only process: then only /healthz, /readyz and /metrics (if METRICS_ENABLED) are served. */
  dispatcher?: CommandDispatcher;
  /** Defaults to the dispatcher. */
  probe?: ReadinessProbe;
  /** The server's shutdown (startServer drains through it); a fresh one when absent. */
  shutdown?: ShutdownState;
}

/** The api as a plugin of its dependencies (env, dispatcher); the logger belongs to the Fastify instance. */
const fusionApp = fp(
  async (app, opts: AppOptions) => {
    const { env, dispatcher } = opts;
    const probe = opts.probe ?? dispatcher;
    if (!probe) throw new Error('fusionApp needs a dispatcher or a readiness probe');
    const shutdown = opts.shutdown ?? new ShutdownState();
    await app.register(errorHandlerPlugin, { bodyLimit: env.BODY_LIMIT_BYTES });
    await app.register(gracefulClosePlugin, { state: shutdown });
    await app.register(drainingPlugin, { state: shutdown });
    await app.register(expectContinuePlugin, { bodyLimit: env.BODY_LIMIT_BYTES });
    await app.register(requireHostPlugin);
    await app.register(connectMethodPlugin);
    // The wire contract is application/json only; anything else is a 415, not a confusing 400.
    app.removeContentTypeParser('text/plain');
    await app.register(httpMetricsPlugin);
    await app.register(healthRoutes, { probe });
    if (env.METRICS_ENABLED) await app.register(metricsRoute);
    if (!dispatcher) return;
    if (!env.PROXY_PASSWORD) throw new Error('fusionApp needs PROXY_PASSWORD to serve the proxy endpoint');
    await app.register(proxyRoute, {
      path: env.PROXY_PATH,
      dispatcher,
      auth: new ProxyAuth(env.PROXY_PASSWORD, {
        maxFailures: env.AUTH_MAX_FAILURES,
        windowMs: env.AUTH_FAILURE_WINDOW_MS,
      }),
      heartbeatIntervalMs: env.HEARTBEAT_INTERVAL_MS,
      shutdownGraceMs: env.SHUTDOWN_GRACE_MS ?? 30_000,
      shutdown,
    });
  },
  { name: 'fusion-app', fastify: '5.x' },
);

/** A hop count becomes the function Fastify would build from it (its types only take the function). */
function trustProxyOption(
  v: boolean | number | string,
): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof v === 'number' ? (_address, hop) => hop < v : v;
}

/** A ready-to-listen Fastify instance (tests use it with inject() or listen on 127.0.0.1:0). */
export async function buildApp(opts: AppOptions & { logger: PinoLogger }): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger,
    bodyLimit: opts.env.BODY_LIMIT_BYTES,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // requireHostPlugin answers a missing Host with a JSON 400; Node's own answer has no body.
    http: { requireHostHeader: false },
    // Behind an ingress every request comes from the ingress: without this the auth throttle
    // would count all clients as one address.
    trustProxy: trustProxyOption(opts.env.TRUST_PROXY ?? false),
  }) as unknown as FastifyInstance;
  const { logger: _logger, ...appOpts } = opts;
  await app.register(fusionApp, appOpts);
  return app;
}
