import { sleep } from './abort';
import { DEFAULT_WINDOW_MS, minGapMs, type RateLimiter } from './rate-limiter';

export interface WindowLimits {
  requestsPerSecond: number;
  windowMs?: number;
}

/**
 * In-process sliding-window log (see RateLimiter). Grants are kept in a ring of RPS
 * timestamps: a new grant is allowed once the oldest of the last RPS grants is a full window old.
 */
export class MemoryTokenBucket implements RateLimiter {
  private grants: number[] = [];
  private holdUntil = 0;
  private limit: number;
  private windowMs: number;
  private readonly now: () => number;

  constructor(limits: WindowLimits, now: () => number = () => performance.now()) {
    this.limit = limits.requestsPerSecond;
    this.windowMs = limits.windowMs ?? DEFAULT_WINDOW_MS;
    this.now = now;
    if (!(this.limit >= 1) || !(this.windowMs >= 1000))
      throw new RangeError('requestsPerSecond must be >= 1 and windowMs >= 1000');
  }

  /** The last configuration seen wins (several commands may share the bucket). */
  configure(limits: WindowLimits): void {
    this.limit = limits.requestsPerSecond;
    this.windowMs = limits.windowMs ?? DEFAULT_WINDOW_MS;
  }

  /** Grants now and returns 0, or returns the milliseconds to wait before asking again. */
  tryAcquire(): number {
    const now = this.now();
    if (this.holdUntil > now) return this.holdUntil - now;
    while (this.grants.length > 0 && this.grants[0] <= now - this.windowMs) this.grants.shift();
    // Limit lowered since: drop grants that no longer fit, oldest first.
    if (this.grants.length > this.limit) this.grants.splice(0, this.grants.length - this.limit);
    let wait = this.grants.length >= this.limit ? this.grants[0] + this.windowMs - now : 0;
    if (this.grants.length > 0)
      wait = Math.max(wait, this.grants[this.grants.length - 1] + minGapMs(this.limit, this.windowMs) - now);
    if (wait <= 0) {
      this.grants.push(now);
      return 0;
    }
    return Math.max(1, Math.ceil(wait));
  }

  async acquire(signal?: AbortSignal): Promise<number> {
    for (;;) {
      const asked = performance.now();
      const wait = this.tryAcquire();
      if (wait === 0) return asked;
      await sleep(wait, signal);
    }
  }

  async holdFor(ms: number): Promise<void> {
    this.holdUntil = Math.max(this.holdUntil, this.now() + ms);
  }
}

const shared = new Map<string, MemoryTokenBucket>();

/** The process-wide bucket of one tenant and token, so concurrent commands share one budget. */
export function sharedMemoryBucket(key: string, limits: WindowLimits): MemoryTokenBucket {
  let bucket = shared.get(key);
  if (!bucket) {
    bucket = new MemoryTokenBucket(limits);
    shared.set(key, bucket);
  } else bucket.configure(limits);
  return bucket;
}
