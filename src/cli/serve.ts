import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { errorMessage } from '../core/errors';
import { createLogger } from '../observability/logger';
import { startWorkerMatchingShards, type MatchingShards } from '../queue/worker-matching-shards';
import { createProductionRunner } from '../runtime/production-runner';
import { loadEnv, type ServerEnv } from '../server/env';
import { RedisHealth } from '../queue/redis-health';
import { closeConnection } from '../queue/redis-close';
import { redisTarget } from '../server/redis-settings';
import { startServer } from '../server/server';

/**
 * After SHUTDOWN_GRACE_MS, how long the bounded clean-up (connections, queues, threads) may take
 * before the process exits anyway.
 */
const SHUTDOWN_SLACK_MS = 10_000;

const USAGE = `usage: fusion-proxy serve

Runs the proxy server. Configuration comes from the environment (see docs/proxy-server.md):
  PORT, PROXY_PASSWORD, PROXY_PATH, REDIS_URL, ROLE, LOG_LEVEL, BODY_LIMIT_BYTES,
  REQUEST_TIMEOUT_MS, WORKER_CONCURRENCY, WORKER_QUICK_CONCURRENCY, HEARTBEAT_INTERVAL_MS, JOB_ENCRYPTION_KEY,
  METRICS_PORT (GET /metrics on its own port instead of PORT), MATCHING_THREADS, MATCHING_PARTITIONS, MATCHING_SHARD_JOBS, ...
Without REDIS_URL it runs in embedded mode (commands run in this process).
`;

/**
 * A fresh clone runs `npm start` with no environment: in embedded mode only, a missing
 * PROXY_PASSWORD is replaced by a random one printed once to stderr. Queue mode (a
 * deployment) never gets a generated password: loadEnv refuses to start instead.
 */
function withDevPassword(env: ServerEnv): ServerEnv {
  if (env.PROXY_PASSWORD || env.REDIS_URL) return env;
  const generated = randomBytes(18).toString('base64url');
  process.stderr.write(
    `\nWARNING: PROXY_PASSWORD is not set. For local development only, this embedded server uses the generated password:\n\n` +
      `    ${generated}\n\n` +
      `Set PROXY_PASSWORD (at least 16 characters) in any real deployment; queue mode refuses to start without it.\n\n`,
  );
  return { ...env, PROXY_PASSWORD: generated };
}

/** What the CLI process (main.ts) does around a stop; absent when `run` is called in process (tests). */
export interface ServeProcessHooks {
  /** A stop began: the process must be gone within `withinMs`, whatever holds it (`overdue` says so). */
  onStopping?: (deadline: { withinMs: number; overdue: () => void }) => void;
}

export async function run(argv: string[], opts: ServeProcessHooks = {}): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(
      `fusion-proxy serve: unexpected argument "${argv[0]}" (configuration comes from the environment)\n${USAGE}`,
    );
    return 2;
  }
  let env: ServerEnv;
  try {
    env = withDevPassword(loadEnv(process.env));
  } catch (e) {
    process.stderr.write(`fusion-proxy serve: ${errorMessage(e)}\n`);
    return 78;
  }
  const logger = createLogger({ level: env.LOG_LEVEL });
  if (env.PROXY_PASSWORD && env.PROXY_PASSWORD.length < 16 && env.ROLE !== 'worker') {
    logger.warn('PROXY_PASSWORD is shorter than 16 characters; use a longer random secret');
  }
  let target;
  try {
    target = redisTarget(env);
  } catch (e) {
    process.stderr.write(`fusion-proxy serve: ${errorMessage(e)}\n`);
    return 78;
  }
  // Shared Redis for the core (locks, rate-limit buckets) where a worker runs commands.
  const runtimeRedis =
    target && env.ROLE !== 'api'
      ? new Redis(target.url, { ...target.options, maxRetriesPerRequest: 3, disconnectTimeout: 200 })
      : undefined;
  const redisHealth = target ? new RedisHealth(target.url, logger) : undefined;
  if (runtimeRedis) redisHealth?.watch(runtimeRedis);
  // Worker role: large aggregations spread matching over child jobs that every worker serves.
  const shards: MatchingShards | undefined =
    target && env.ROLE !== 'api' && env.MATCHING_SHARD_JOBS !== 0
      ? startWorkerMatchingShards(env, target, logger, redisHealth)
      : undefined;
  const runner = createProductionRunner({
    ...(runtimeRedis ? { redis: runtimeRedis } : {}),
    ...(env.MATCHING_THREADS ? { matchingThreads: env.MATCHING_THREADS } : {}),
    ...(env.MATCHING_PARTITIONS ? { matchingPartitions: true } : {}),
    ...(shards ? { matchingShards: shards.provider, remotePartitions: shards.partitions } : {}),
  });
  let server;
  try {
    server = await startServer(env, { runner, logger, redisHealth });
  } catch (e) {
    logger.error({ err: errorMessage(e) }, 'fusion-proxy could not start');
    await shards?.close();
    runtimeRedis?.disconnect();
    return 1;
  }
  const running = server;
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      // Once: the other signal's listener would hold the closed server (and a second stop) for good.
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      logger.info({ signal }, 'shutting down: no new requests, finishing open streams and running jobs');
      // Whatever a dependency does (a Redis that never answers), the process ends: the grace, then a
      // bounded clean-up, then out. An orchestrator's SIGKILL must never be the only way to stop it.
      opts.onStopping?.({
        withinMs: env.SHUTDOWN_GRACE_MS + SHUTDOWN_SLACK_MS,
        overdue: () =>
          logger.error(
            { graceMs: env.SHUTDOWN_GRACE_MS },
            `shutdown did not finish within SHUTDOWN_GRACE_MS + ${SHUTDOWN_SLACK_MS / 1000} s; exiting`,
          ),
      });
      running.close().then(resolve, (e: unknown) => {
        logger.error({ err: errorMessage(e) }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await shards?.close();
  if (runtimeRedis) await closeConnection(runtimeRedis);
  logger.info('fusion-proxy stopped');
  return 0;
}
