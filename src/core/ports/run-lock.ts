/**
 * One aggregation per connector source at a time. A lock is held by a token (the run id) and
 * expires after its TTL unless renewed, so a crashed holder frees it by itself. Redis-backed
 * (queue mode, shared by every worker) and in-memory (embedded mode) implementations pass the
 * same test suite.
 */
export interface RunLock {
  /** Takes the lock when it is free (or expired); false when another token holds it. */
  acquire(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Extends the TTL only while `token` still holds the lock; false when it was lost. */
  renew(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Frees the lock only when `token` holds it (never another run's lock); false otherwise. */
  release(key: string, token: string): Promise<boolean>;
}

export interface HeldLock {
  /** True once a renewal found the lock taken by someone else or expired. */
  readonly lost: boolean;
  release(): Promise<void>;
}

export interface HoldOptions {
  ttlMs: number;
  /** Renewal period; defaults to a third of the TTL. */
  renewEveryMs?: number;
  onLost?: () => void;
}

/** Acquires and keeps renewing the lock until released; undefined when another holder has it. */
export async function holdRunLock(lock: RunLock, key: string, token: string, opts: HoldOptions): Promise<HeldLock | undefined> {
  if (!(await lock.acquire(key, token, opts.ttlMs))) return undefined;
  let lost = false;
  let stopped = false;
  const timer = setInterval(() => {
    lock.renew(key, token, opts.ttlMs).then(
      (ok) => {
        if (!ok && !stopped && !lost) {
          lost = true;
          opts.onLost?.();
        }
      },
      // A failed renewal (Redis blip) is retried on the next tick; the TTL covers two misses.
      () => undefined,
    );
  }, opts.renewEveryMs ?? Math.max(10, Math.floor(opts.ttlMs / 3)));
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    async release() {
      stopped = true;
      clearInterval(timer);
      await lock.release(key, token);
    },
  };
}
