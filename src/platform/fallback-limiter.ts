import { isFusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import type { Grant, RateLimiter } from './rate-limiter';

/**
 * The shared bucket, or this process's own when Redis cannot be reached. Only for the clean-up
 * calls of a run (see PlatformFactory `purpose`): a handful of calls that must not be lost to a
 * Redis outage, whose local budget cannot add up to much across pods.
 */
export class FallbackLimiter implements RateLimiter {
  private warned = false;

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly logger: Logger,
    /**
     * False while the shared bucket's connection is down: then the local budget is used at once
     * instead of after the client's reconnection attempts (seconds per call).
     */
    private readonly sharedReachable: () => boolean = () => true,
  ) {}

  private fallBack(e: unknown): boolean {
    if (!isFusionError(e, 'RATE_LIMITER_UNAVAILABLE')) return false;
    this.warn(e.message);
    return true;
  }

  private warn(reason: string): void {
    if (this.warned) return;
    this.warned = true;
    this.logger.warn(
      { err: reason },
      "the shared rate limiter is unreachable: clean-up calls use this process's own budget",
    );
  }

  /** A grant handed back to the other bucket than the one that made it is unknown there: a no-op. */
  async acquire(signal?: AbortSignal, replacing?: Grant): Promise<Grant> {
    if (!this.sharedReachable()) {
      this.warn('its Redis connection is down');
      return this.local.acquire(signal, replacing);
    }
    try {
      return await this.shared.acquire(signal, replacing);
    } catch (e) {
      if (!this.fallBack(e)) throw e;
      return this.local.acquire(signal, replacing);
    }
  }

  async holdFor(ms: number): Promise<void> {
    await this.local.holdFor(ms);
    if (!this.sharedReachable()) return;
    try {
      await this.shared.holdFor(ms);
    } catch (e) {
      if (!this.fallBack(e)) throw e;
    }
  }
}
