import type { FastifyInstance } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import type { CommandRunner } from '../core/command-runner';
import type { CommandDispatcher } from '../dispatch/command-dispatcher';
import { CommandWorker } from '../queue/command-worker';
import { JobCrypto } from '../queue/job-crypto';
import { QueueDispatcher } from '../queue/queue-dispatcher';
import { RedisHealth } from '../queue/redis-health';
import { awaitFinalScrape, scrapePending } from '../observability/final-scrape';
import { buildApp } from './app';
import { EmbeddedDispatcher } from '../dispatch/embedded-dispatcher';
import type { ServerEnv } from './env';
import { redisTarget } from './redis-settings';
import { ShutdownState } from './shutdown-state';
import { PodDeletionCost } from './pod-deletion-cost';
import { separateMetricsPort, startMetricsListener, type MetricsListener } from './metrics-server';

export interface RunningServer {
  app: FastifyInstance;
  /** http://host:port actually bound. */
  url: string;
  dispatcher?: CommandDispatcher;
  worker?: CommandWorker;
  /** The separate GET /metrics listener, when METRICS_PORT asks for one (then `app` has no /metrics). */
  metrics?: MetricsListener;
  /**
   * Stops taking requests, lets open streams and running jobs finish (up to SHUTDOWN_GRACE_MS), closes connections
   * (both listeners).
   */
  close(): Promise<void>;
}

/** The longest a stopping process waits for a scrape after its last job: the chart's 30 s interval and a half. */
const FINAL_SCRAPE_WAIT_MS = 45_000;
/** Even at the end of its grace, this long (the pod's exit budget beyond SHUTDOWN_GRACE_MS is 10 s). */
const FINAL_SCRAPE_MIN_MS = 5_000;

function jobCrypto(env: ServerEnv): JobCrypto {
  if (env.JOB_ENCRYPTION_KEY) return JobCrypto.fromKey(env.JOB_ENCRYPTION_KEY);
  if (env.PROXY_PASSWORD) return JobCrypto.fromPassword(env.PROXY_PASSWORD);
  throw new Error('unreachable: loadEnv requires JOB_ENCRYPTION_KEY or PROXY_PASSWORD in queue mode');
}

/** Wires the mode and role the environment asks for, then listens. */
export async function startServer(
  env: ServerEnv,
  deps: { runner: CommandRunner; logger: PinoLogger; redisHealth?: RedisHealth; podDeletionCost?: PodDeletionCost },
): Promise<RunningServer> {
  const { runner, logger } = deps;
  const podCost =
    deps.podDeletionCost ??
    (env.POD_DELETION_COST && env.ROLE !== 'api'
      ? PodDeletionCost.inCluster({ name: env.POD_NAME!, namespace: env.POD_NAMESPACE! }, logger)
      : undefined);
  const serveApi = env.ROLE !== 'worker';
  let dispatcher: CommandDispatcher | undefined;
  let worker: CommandWorker | undefined;
  const redis = redisTarget(env);
  if (redis) {
    const crypto = jobCrypto(env);
    // One view of Redis for every connection of this process: one log line per outage, not one per socket.
    const redisHealth = deps.redisHealth ?? new RedisHealth(redis.url, logger);
    if (env.ROLE !== 'api') {
      worker = new CommandWorker({
        redisUrl: redis.url,
        redisOptions: redis.options,
        runner,
        crypto,
        logger,
        concurrency: env.WORKER_CONCURRENCY,
        quickConcurrency: env.WORKER_QUICK_CONCURRENCY,
        queueName: env.QUEUE_NAME,
        lockDurationMs: env.WORKER_LOCK_MS,
        stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
        redisHealth,
        ...(podCost ? { onRunningChange: (n: number) => podCost.set(n) } : {}),
        stream: {
          progressIntervalMs: Math.max(5, Math.min(1000, Math.floor(env.REQUEST_TIMEOUT_MS / 4))),
          readerIdleTimeoutMs: env.REQUEST_TIMEOUT_MS,
        },
      });
    }
    if (serveApi) {
      dispatcher = new QueueDispatcher({
        redisUrl: redis.url,
        redisOptions: redis.options,
        crypto,
        logger,
        requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
        queueName: env.QUEUE_NAME,
        redisHealth,
      });
    }
  } else {
    dispatcher = new EmbeddedDispatcher({
      runner,
      logger,
      concurrency: env.WORKER_CONCURRENCY,
      quickConcurrency: env.WORKER_QUICK_CONCURRENCY,
      requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    });
  }
  const metricsPort = separateMetricsPort(env);
  const shutdown = new ShutdownState();
  const app = await buildApp({
    shutdown,
    env: {
      ...env,
      PROXY_PASSWORD: serveApi ? env.PROXY_PASSWORD : undefined,
      METRICS_ENABLED: env.METRICS_ENABLED && metricsPort === undefined,
    },
    dispatcher,
    probe: dispatcher ?? worker,
    logger,
  });
  let metrics: MetricsListener | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        // Api and worker drain together: open streams may be waiting on jobs this worker runs. New
        // requests are answered 503 and /readyz says not ready, while open streams and running jobs go
        // on; only then does the listener close, so the liveness probe keeps passing on a worker that
        // finishes a long aggregation after a scale-in.
        const drainStarted = Date.now();
        await Promise.all([shutdown.drain(env.SHUTDOWN_GRACE_MS), worker?.close(env.SHUTDOWN_GRACE_MS)]);
        // The last jobs' counters reach Prometheus before the listeners close: one more scrape, within what is left
        // of the grace (at most a scrape interval and a half).
        if (env.METRICS_ENABLED && scrapePending()) {
          const left = env.SHUTDOWN_GRACE_MS - (Date.now() - drainStarted);
          const maxMs = Math.min(FINAL_SCRAPE_WAIT_MS, Math.max(FINAL_SCRAPE_MIN_MS, left));
          logger.info({ maxMs }, 'waiting for a final metrics scrape, so the last jobs are counted');
          const waited = await awaitFinalScrape(maxMs);
          logger.info({ finalScrape: waited }, 'final metrics scrape done');
        }
        await app.close();
        await dispatcher?.close();
      } finally {
        podCost?.close();
        // Last, so a draining pod can still be scraped.
        await metrics?.close();
      }
    })();
    return closing;
  };
  let url: string;
  try {
    url = await app.listen({ port: env.PORT, host: env.HOST });
    if (metricsPort !== undefined) metrics = await startMetricsListener({ host: env.HOST, port: metricsPort, logger });
  } catch (e) {
    await close();
    throw e;
  }
  logger.info(
    { url, metricsUrl: metrics?.url, mode: env.REDIS_URL ? 'queue' : 'embedded', role: env.ROLE, path: env.PROXY_PATH },
    'fusion-proxy serving',
  );
  return { app, url, dispatcher, worker, metrics, close };
}
