import type { FastifyPluginAsync } from 'fastify';
import type { Readiness } from '../../dispatch/command-dispatcher';

/** What /readyz asks: a dispatcher (api) or a worker. */
export interface ReadinessProbe {
  readonly mode: string;
  ready(): Promise<Readiness>;
}

export interface HealthRouteOptions {
  [key: string]: unknown;
  probe: ReadinessProbe;
}

/** /healthz: the process answers. /readyz: it can take commands (Redis reachable in queue mode). */
export const healthRoutes: FastifyPluginAsync<HealthRouteOptions> = async (app, opts) => {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const r = await opts.probe.ready();
    if (r.ok) return { status: 'ready', mode: opts.probe.mode };
    return reply.code(503).send({ status: 'not ready', mode: opts.probe.mode, error: r.reason ?? 'not ready' });
  });
};
