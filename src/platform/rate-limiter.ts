import { sleep } from './abort';

/**
 * The request budget towards the platform, shared by everything that uses the same tenant and
 * access token: in one process (memory) or across every api and worker pod (Redis).
 *
 * Guarantee: over any window of `windowMs` (>= 1 s) at most `requestsPerSecond` grants are
 * made, so the request rate measured in any 1-second window never exceeds the configured RPS.
 * It is a sliding-window log: a token bucket of capacity RPS whose every token comes back
 * exactly one window after it was spent, which allows catching up after an idle moment
 * without ever bursting past the limit.
 *
 * Grants are also spaced by at least 3/4 of the even spacing (see minGapMs): a full window's
 * worth never leaves at once, so the platform sees a smooth stream rather than bursts that
 * queue up and arrive bunched.
 */
export interface RateLimiter {
  /**
   * Waits until one request may be sent. Resolves with a local time (`performance.now()`) at or
   * before which the grant was recorded: for a shared bucket, when the granting call was sent.
   * The staleness check before dispatch measures from it, so an event-loop stall between the
   * grant and this promise's continuation is counted too. Rejects with an AbortError when
   * `signal` aborts.
   */
  acquire(signal?: AbortSignal): Promise<number>;
  /** Holds every user of this budget back for `ms` (a 429's Retry-After). */
  holdFor(ms: number): Promise<void>;
}

/**
 * Window length for a limit of N requests per second. The extra margin absorbs the jitter
 * between granting a request and its arrival at the platform (event loop, connection reuse),
 * so that arrivals, not only grants, stay within the limit. It costs ~3 % of peak throughput.
 */
export const DEFAULT_WINDOW_MS = 1030;

/**
 * Smallest time between two grants: 3/4 of the even spacing window/RPS, so the peak rate is
 * 4/3 of RPS. Enough to catch up after a pause, smooth enough that a single-threaded platform
 * front does not queue bursts and timestamp them bunched.
 */
export function minGapMs(requestsPerSecond: number, windowMs: number): number {
  return (windowMs / requestsPerSecond) * 0.75;
}

/** A limiter that only honours holds: used when "Enable queue" is off. */
export class HoldOnlyLimiter implements RateLimiter {
  private holdUntil = 0;

  async acquire(signal?: AbortSignal): Promise<number> {
    for (;;) {
      const now = performance.now();
      const wait = this.holdUntil - now;
      if (wait <= 0) return now;
      await sleep(wait, signal);
    }
  }

  async holdFor(ms: number): Promise<void> {
    this.holdUntil = Math.max(this.holdUntil, performance.now() + ms);
  }
}
