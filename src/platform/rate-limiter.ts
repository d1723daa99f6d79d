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
 * Grants are also spaced by at least half the even spacing (see minGapMs): a full window's
 * worth never leaves at once, so the platform sees a smooth stream rather than bursts that
 * queue up and arrive bunched.
 *
 * A grant that went stale before its request was sent is handed back when its replacement is
 * asked for (`replacing`): the request it stood for never left, so counting it would only waste
 * a slot of the window (at RPS 50 that cost about 10 % of the rate).
 */
export interface Grant {
  /**
   * Local time (`performance.now()`) at or before which the grant was recorded: for a shared
   * bucket, when the granting call was sent. The staleness check before dispatch measures from
   * it, so an event-loop stall between the grant and the caller's continuation is counted too.
   */
  readonly at: number;
  /** Identifies the grant in its limiter's log, to hand it back. */
  readonly id: string;
}

export interface RateLimiter {
  /**
   * Waits until one request may be sent. With `replacing`, that unused grant of this limiter is
   * removed from the log first (in the same atomic step for a shared bucket). Rejects with an
   * AbortError when `signal` aborts.
   */
  acquire(signal?: AbortSignal, replacing?: Grant): Promise<Grant>;
  /** Holds every user of this budget back for `ms` (a 429's Retry-After). */
  holdFor(ms: number): Promise<void>;
}

/**
 * Window length for a limit of N requests per second. The extra margin absorbs the jitter
 * between granting a request and its arrival at the platform (event loop, connection reuse),
 * so that arrivals, not only grants, stay within the limit. It costs 1.5 % of peak throughput;
 * grants older than STALE_GRANT_MS (12 ms, request-executor) are replaced before dispatch, so the
 * margin covers them and the way from dispatch to the platform.
 */
export const DEFAULT_WINDOW_MS = 1015;

/**
 * Smallest time between two grants: half the even spacing window/RPS, so the peak rate is twice
 * RPS. Smooth enough that a single-threaded platform front does not queue bursts and timestamp
 * them bunched; loose enough that a waiter woken late (a loaded machine fires timers tens of ms
 * late) can catch up: with 3/4 of the spacing, every late wake-up was lost for good and three
 * pods at RPS 10 reached 86 % of the rate.
 */
export function minGapMs(requestsPerSecond: number, windowMs: number): number {
  return (windowMs / requestsPerSecond) * 0.5;
}

/** A limiter that only honours holds: used when "Enable queue" is off. */
export class HoldOnlyLimiter implements RateLimiter {
  private holdUntil = 0;

  async acquire(signal?: AbortSignal): Promise<Grant> {
    for (;;) {
      const now = performance.now();
      const wait = this.holdUntil - now;
      if (wait <= 0) return { at: now, id: '' };
      await sleep(wait, signal);
    }
  }

  async holdFor(ms: number): Promise<void> {
    this.holdUntil = Math.max(this.holdUntil, performance.now() + ms);
  }
}
