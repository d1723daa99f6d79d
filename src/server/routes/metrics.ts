import type { FastifyPluginAsync } from 'fastify';
import { registry } from '../../observability/metrics-registry';

/** GET /metrics: Prometheus text from the process-wide registry. */
export const metricsRoute: FastifyPluginAsync = async (app) => {
  app.get('/metrics', async (_request, reply) => {
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });
};
