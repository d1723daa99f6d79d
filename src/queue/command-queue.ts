import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ProxyCommand } from '../dispatch/command-dispatcher';
import type { JobCrypto } from './job-crypto';
import { sealCommand, type CommandJobData } from './job-data';
import type { QueueStatsSource } from './metrics';
import { DEFAULT_BULL_PREFIX } from './queue-names';

/**
 * Producer side of the command queue. Jobs are single-attempt (output already streamed cannot
 * be replayed) and removed when done, so sealed payloads do not linger in Redis.
 */
export class CommandQueue implements QueueStatsSource {
  readonly queue: Queue<CommandJobData>;

  constructor(
    connection: Redis,
    readonly name: string,
    private readonly crypto: JobCrypto,
    prefix = DEFAULT_BULL_PREFIX,
  ) {
    this.queue = new Queue<CommandJobData>(name, { connection, prefix });
  }

  async add(cmd: ProxyCommand): Promise<void> {
    await this.queue.add(cmd.type, sealCommand(cmd, this.crypto), {
      jobId: cmd.requestId,
      attempts: 1,
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  /** Removes a job that no worker has taken yet; an active job is stopped through its cancel key instead. */
  async removeIfWaiting(jobId: string): Promise<void> {
    try {
      await this.queue.remove(jobId);
    } catch {
      // Active (locked) or already gone.
    }
  }

  async jobCounts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized');
  }

  async workerCount(): Promise<number> {
    return this.queue.getWorkersCount();
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
