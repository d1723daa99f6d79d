import { sleep } from './abort';
import { DEFAULT_WINDOW_MS, minGapMs, type Grant, type RateLimiter } from './rate-limiter';

export interface WindowLimits {
  requestsPerSecond: number;
  windowMs?: number;
}

/**
 * In-process sliding-window log (see RateLimiter). Grants are kept in a ring of RPS
 * timestamps: a new grant is allowed once the oldest of the last RPS grants is a full window old.
 */
export class MemoryTokenBucket implements RateLimiter {
  /** Times of the grants still in the window, oldest first, and their ids. */
  private grants: number[] = [];
  private ids: number[] = [];
  private nextId = 1;
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

  /**
   * Grants now and returns 0, or returns the milliseconds to wait before asking again. With
   * `replacing`, that unused grant leaves the log first, whatever the outcome.
   */
  tryAcquire(replacing?: string): number {
    return this.tryGrant(replacing).wait;
  }

  /** tryAcquire with the id of the grant made (empty when it says to wait). */
  tryGrant(replacing?: string): { wait: number; id: string } {
    if (replacing) {
      const i = this.ids.indexOf(Number(replacing));
      if (i >= 0) {
        this.grants.splice(i, 1);
        this.ids.splice(i, 1);
      }
    }
    const now = this.now();
    if (this.holdUntil > now) return { wait: this.holdUntil - now, id: '' };
    let expired = 0;
    while (expired < this.grants.length && this.grants[expired]! <= now - this.windowMs) expired++;
    // Limit lowered since: drop grants that no longer fit, oldest first.
    expired = Math.max(expired, this.grants.length - this.limit);
    if (expired > 0) {
      this.grants.splice(0, expired);
      this.ids.splice(0, expired);
    }
    let wait = this.grants.length >= this.limit ? this.grants[0]! + this.windowMs - now : 0;
    if (this.grants.length > 0)
      wait = Math.max(wait, this.grants[this.grants.length - 1]! + minGapMs(this.limit, this.windowMs) - now);
    if (wait > 0) return { wait: Math.max(1, Math.ceil(wait)), id: '' };
    const id = this.nextId++;
    this.grants.push(now);
    this.ids.push(id);
    return { wait: 0, id: String(id) };
  }

  /** Grants still counted in the window (for tests). */
  get inWindow(): number {
    return this.grants.length;
  }

  async acquire(signal?: AbortSignal, replacing?: Grant): Promise<Grant> {
    let handBack = replacing?.id;
    for (;;) {
      const asked = performance.now();
      const { wait, id } = this.tryGrant(handBack);
      handBack = undefined;
      if (wait === 0) return { at: asked, id };
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
