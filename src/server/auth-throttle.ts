/**
 * Counts failed passwords per client address in a fixed window; past the limit the address
 * is refused (429) without the password being checked, until its window ends.
 */
export class AuthThrottle {
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly maxTracked = 50_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until the address may try again, or 0 when it may try now. */
  retryAfterMs(address: string): number {
    const entry = this.failures.get(address);
    if (!entry) return 0;
    const elapsed = this.now() - entry.windowStart;
    if (elapsed >= this.windowMs) {
      this.failures.delete(address);
      return 0;
    }
    return entry.count >= this.maxFailures ? this.windowMs - elapsed : 0;
  }

  recordFailure(address: string): void {
    const now = this.now();
    const entry = this.failures.get(address);
    if (entry && now - entry.windowStart < this.windowMs) {
      entry.count += 1;
      return;
    }
    if (this.failures.size >= this.maxTracked) this.evict(now);
    this.failures.set(address, { count: 1, windowStart: now });
  }

  private evict(now: number): void {
    for (const [address, entry] of this.failures) {
      if (now - entry.windowStart >= this.windowMs) this.failures.delete(address);
    }
    // Still full (an attack from many addresses): forget the oldest rather than grow without bound.
    if (this.failures.size >= this.maxTracked) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }
}
