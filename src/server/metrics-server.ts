import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import type { ServerEnv } from './env';
import { metricsRoute } from './routes/metrics';

/**
 * The port GET /metrics gets a listener of its own on, or undefined when it stays on PORT.
 * Equal ports mean one listener, except 0 ("any free port"), which gives two distinct ports.
 */
export function separateMetricsPort(
  env: Pick<ServerEnv, 'PORT' | 'METRICS_PORT' | 'METRICS_ENABLED'>,
): number | undefined {
  if (!env.METRICS_ENABLED || env.METRICS_PORT === undefined) return undefined;
  if (env.METRICS_PORT === env.PORT && env.PORT !== 0) return undefined;
  return env.METRICS_PORT;
}

export interface MetricsListener {
  app: FastifyInstance;
  /** http://host:port actually bound. */
  url: string;
  close(): Promise<void>;
}

/**
 * A second, minimal listener that serves GET /metrics and nothing else. Scrapes then never share
 * a port with the proxy endpoint, so no ingress or route to that port can expose them.
 */
export async function startMetricsListener(opts: {
  host: string;
  port: number;
  logger: PinoLogger;
}): Promise<MetricsListener> {
  const app = Fastify({
    loggerInstance: opts.logger.child({ listener: 'metrics' }),
    // A scrape every few seconds is not worth a log line.
    logController: new LogController({ disableRequestLogging: true }),
  }) as unknown as FastifyInstance;
  try {
    await app.register(metricsRoute);
    const url = await app.listen({ port: opts.port, host: opts.host });
    return { app, url, close: () => app.close() };
  } catch (e) {
    await app.close();
    throw e;
  }
}
