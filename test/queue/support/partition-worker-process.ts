/**
 * A worker process that serves the partition queue (the production PartitionJobWorker) for
 * test/queue/partition-kill.test.ts, bundled by esbuild and run by node. It decides its partitions in
 * this process (a bundle has no thread entry), says "holding" once a partition has answered two
 * batches, and answers nothing more: the test then kills it mid-run with SIGKILL.
 * REDIS_URL, BENCH_PREFIX and CLAIM_TTL_MS from the environment; prints "ready" once connected.
 */
import { PartitionDecider } from '../../../src/core/aggregation/partition-decisions';
import type { StartPartition } from '../../../src/core/aggregation/partition-thread';
import { silentLogger as logger } from '../../../src/core/ports/logger';
import { PartitionJobWorker } from '../../../src/queue/partition-job-worker';

const holding: StartPartition = (start, out) => {
  let decided = 0;
  const decider = new PartitionDecider(start, {
    decided: (d) => {
      if (++decided > 2) return;
      out.decided(d);
      if (decided === 2) process.stdout.write('holding\n');
    },
    exported: (to, batch, records) => out.exported(to, batch, records),
  });
  return {
    take: (work) => decider.take(work),
    import: (batch, records) => decider.import(batch, records),
    close: async () => undefined,
  };
};

async function main(): Promise<void> {
  const worker = new PartitionJobWorker({
    redisUrl: process.env.REDIS_URL!,
    prefix: process.env.BENCH_PREFIX!,
    logger,
    concurrency: 1,
    // Takes its partition whatever the test machine's container allows (the kill test counts takeovers).
    memoryLimit: undefined,
    claimTtlMs: Number(process.env.CLAIM_TTL_MS),
    startPartition: holding,
  });
  await worker.worker.waitUntilReady();
  process.stdout.write('ready\n');
}

void main();
