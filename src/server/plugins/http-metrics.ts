import { httpRequestDuration, httpRequests } from '../metrics';
import fp from 'fastify-plugin';

const started = new WeakMap<object, bigint>();

/**
 * Routes left out of the request metrics: the kubelet's probes and Prometheus' scrapes arrive every
 * few seconds from every pod and would swamp the request rate and latency of real traffic.
 */
const PROBE_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/** Request count and duration by route template (never the raw URL: bounded labels). */
export const httpMetricsPlugin = fp(
  async (app) => {
    app.addHook('onRequest', async (request) => {
      started.set(request, process.hrtime.bigint());
    });
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      if (PROBE_ROUTES.has(route)) return;
      const method = request.method;
      httpRequests.inc({ route, method, status: String(reply.statusCode) });
      const t0 = started.get(request);
      if (t0 !== undefined) httpRequestDuration.observe({ route, method }, Number(process.hrtime.bigint() - t0) / 1e9);
    });
  },
  { name: 'fusion-http-metrics', fastify: '5.x' },
);
