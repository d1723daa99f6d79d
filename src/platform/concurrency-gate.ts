import { AbortedError } from './abort';

/**
 * At most `limit` requests in flight from one client. Waiters are served first come, first
 * served; a waiter whose signal aborts leaves the line without taking a slot.
 */
export class ConcurrencyGate {
  private active = 0;
  private readonly waiters: { grant: () => void }[] = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('concurrency limit must be a positive integer');
  }

  get inFlight(): number {
    return this.active;
  }

  /** Resolves with a release function that must be called exactly once. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: (): void => {
          signal?.removeEventListener('abort', onAbort);
          this.active++;
          resolve(this.releaser());
        },
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new AbortedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const next = this.waiters.shift();
      if (next) next.grant();
    };
  }
}
