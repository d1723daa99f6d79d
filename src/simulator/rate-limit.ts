export interface RateLimitConfig {
  requests: number;
  windowMs: number;
}

/**
 * Sliding-window limit per client id, as the platform applies per token: at most `requests` in any
 * `windowMs`. A refused request is not counted, so a client that honours Retry-After gets through.
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(public config: RateLimitConfig | false) {}

  /** Returns 0 when allowed, otherwise the seconds to wait (the Retry-After value). */
  take(clientId: string, now = Date.now()): number {
    if (!this.config) return 0;
    const { requests, windowMs } = this.config;
    let list = this.hits.get(clientId);
    if (!list) {
      list = [];
      this.hits.set(clientId, list);
    }
    const cutoff = now - windowMs;
    let drop = 0;
    while (drop < list.length && (list[drop] as number) <= cutoff) drop++;
    if (drop > 0) list.splice(0, drop);
    if (list.length >= requests) {
      const waitMs = (list[0] as number) + windowMs - now;
      return Math.max(1, Math.ceil(waitMs / 1000));
    }
    list.push(now);
    return 0;
  }

  reset(): void {
    this.hits.clear();
  }
}
