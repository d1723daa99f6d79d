/**
 * The longest an interval timer waited past its period in this process: what the run lock's renewal
 * (a timer every 20 s, TTL 60 s) waits when the owner holds the event loop. Past 40 s the lock lapses
 * and the run stops with AGGREGATION_LOCK_LOST.
 */
const PERIOD_MS = 100;

export class LoopGaps {
  private longest = 0;
  private last = performance.now();
  private readonly timer = setInterval(() => {
    const now = performance.now();
    this.longest = Math.max(this.longest, now - this.last - PERIOD_MS);
    this.last = now;
  }, PERIOD_MS).unref();

  /** The longest late timer since construction, in ms; stops measuring. */
  stop(): number {
    clearInterval(this.timer);
    const now = performance.now();
    return Math.max(this.longest, now - this.last - PERIOD_MS);
  }
}
