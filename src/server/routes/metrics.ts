import type { FastifyPluginAsync } from 'fastify';
import { noteScrape } from '../../observability/final-scrape';
import { registry } from '../../observability/metrics-registry';

/** GET /metrics: Prometheus text from the process-wide registry. */
export const metricsRoute: FastifyPluginAsync = async (app) => {
  app.get('/metrics', async (_request, reply) => {
    // Dated when the text starts being taken: a change during it counts as not yet scraped.
    const startedAt = performance.now();
    const text = await registry.metrics();
    noteScrape(startedAt);
    return reply.type(registry.contentType).send(text);
  });
};
