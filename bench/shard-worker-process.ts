/**
 * One worker process of bench:scale-out's queue and aggregation modes: serves matching child jobs (the
 * production ShardJobWorker, engines in matching threads) or, with BENCH_SERVE=partitions, the partitions
 * of runs decided in partitions (the production PartitionJobWorker, one partition thread at a time) until
 * SIGTERM. REDIS_URL and BENCH_PREFIX from the environment; prints "ready" once connected.
 */
import { silentLogger as logger } from '../src/core/ports/logger';
import { PartitionJobWorker } from '../src/queue/partition-job-worker';
import { ShardJobWorker } from '../src/queue/shard-job-worker';

async function main(): Promise<void> {
  const opts = { redisUrl: process.env.REDIS_URL!, prefix: process.env.BENCH_PREFIX!, logger, concurrency: 1 };
  const worker = process.env.BENCH_SERVE === 'partitions' ? new PartitionJobWorker(opts) : new ShardJobWorker(opts);
  await worker.worker.waitUntilReady();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void worker.close().then(() => process.exit(0));
  });
}

void main();
