import type { Queue } from 'bullmq';

/** Worker pods come and go with autoscaling; a run asks for the count often, Redis is asked this often. */
const REFRESH_MS = 15_000;

/**
 * How many worker processes serve a queue (BullMQ's count of its workers' connections), refreshed in
 * the background: child jobs and partitions are sized by it, so adding worker pods adds them.
 */
export class ServingWorkers {
  private serving = 1;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly queue: Queue) {
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS).unref();
    void this.refresh();
  }

  /** At least 1 (this process), until Redis has answered. */
  count(): number {
    return this.serving;
  }

  async refresh(): Promise<void> {
    try {
      this.serving = Math.max(1, await this.queue.getWorkersCount());
    } catch {
      // CLIENT LIST refused (some managed Redis) or Redis away: keep the last count.
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
