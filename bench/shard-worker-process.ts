/**
 * One worker process of bench:scale-out's queue mode: serves matching child jobs (the production
 * ShardJobWorker, engines in matching threads) until SIGTERM. REDIS_URL and BENCH_PREFIX from the
 * environment; prints "ready" once connected.
 */
import { silentLogger as logger } from '../src/core/ports/logger';
import { ShardJobWorker } from '../src/queue/shard-job-worker';

async function main(): Promise<void> {
  const worker = new ShardJobWorker({
    redisUrl: process.env.REDIS_URL!,
    prefix: process.env.BENCH_PREFIX!,
    logger,
    concurrency: 1,
  });
  await worker.worker.waitUntilReady();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void worker.close().then(() => process.exit(0));
  });
}

void main();
