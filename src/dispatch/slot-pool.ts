import { FusionError } from '../core/errors';

/** A counting semaphore whose waiters can be cancelled; bounds concurrent commands in one process. */
export class SlotPool {
  private used = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Slots held now. */
  get inUse(): number {
    return this.used;
  }

  /** Acquirers waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  async acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new FusionError('COMMAND_CANCELLED', 'the request was cancelled');
    if (this.used < this.size) {
      this.used += 1;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new FusionError('COMMAND_CANCELLED', 'the request was cancelled'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(grant);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.used -= 1;
  }
}
