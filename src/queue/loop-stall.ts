/**
 * How long this process's event loop was recently unable to run. A process starved of CPU (a CPU
 * limit, a noisy node) reads Redis' answers late: a timeout it then sees is its own, and must not be
 * reported as Redis being unavailable.
 */
const TICK_MS = 100;
/** How far back a stall is remembered. */
const WINDOW_MS = 30_000;

class LoopStallMonitor {
  private last = performance.now();
  private readonly stalls: Array<{ at: number; ms: number }> = [];
  private timer: NodeJS.Timeout | undefined;

  private start(): void {
    if (this.timer) return;
    this.last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      const late = now - this.last - TICK_MS;
      this.last = now;
      if (late >= TICK_MS) this.stalls.push({ at: now, ms: Math.round(late) });
      while (this.stalls.length > 0 && now - this.stalls[0]!.at > WINDOW_MS) this.stalls.shift();
    }, TICK_MS);
    this.timer.unref();
  }

  /** Starts watching (idempotent): call where a later timeout may need explaining. */
  watch(): void {
    this.start();
  }

  /** How long (ms) the loop could not run within the last `withinMs`, counting a stall still going on now. */
  stalledWithin(withinMs: number): number {
    const now = performance.now();
    const from = now - withinMs;
    let total = this.timer ? Math.max(0, now - Math.max(this.last, from) - TICK_MS) : 0;
    // A stall is the span [at - ms, at]: only its part inside the window counts.
    for (const s of this.stalls) total += Math.max(0, s.at - Math.max(s.at - s.ms, from));
    return Math.round(total);
  }
}

export const loopStall = new LoopStallMonitor();

/**
 * The words for a Redis call that this process gave up on after `waitedMs`: its own stall when its
 * event loop could not run for at least half of that wait, else undefined (then Redis is the suspect).
 */
export function busyProcessCause(waitedMs: number): string | undefined {
  const stalled = loopStall.stalledWithin(waitedMs);
  if (stalled < waitedMs / 2) return undefined;
  return `this process was too busy to read Redis' answer in time (its event loop could not run for ${stalled} ms of the ${waitedMs} ms it waited: a CPU limit or CPU starvation); Redis itself may be fine`;
}
