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
  /** The token holding the lock now, if any (tells a short std:account:create from an aggregation). */
  holder(key: string): Promise<string | undefined>;
  /**
   * An id shared by every run that takes its locks from the same store (one Redis, one process).
   * A run of the same scope that still lived would hold the lock: so a run that holds it knows
   * every other run of its scope has ended or stopped (a run that loses its lock stops).
   */
  scope(): Promise<string>;
}

/**
 * Tokens of std:account:create holding the source's lock while it issues counter values: creates
 * are serialised with each other and with aggregations, which read and persist the same counters.
 */
export const CREATE_TOKEN_PREFIX = 'create:';

/** The lock key of a connector source: one aggregation (or counter-issuing create) at a time. */
export function sourceLockKey(tenant: string, sourceId: string): string {
  return `${tenant}:${sourceId}`;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Tries to take the lock for up to `waitMs` while `retryWhile(holderToken)` allows it (by default
 * while anyone holds it). True once taken; false when still held after the wait, or when the
 * holder is one that is not worth waiting for.
 */
export async function acquireWithin(
  lock: RunLock,
  key: string,
  token: string,
  opts: {
    ttlMs: number;
    waitMs: number;
    pollMs?: number;
    signal?: AbortSignal;
    retryWhile?: (holder: string) => boolean;
  },
): Promise<boolean> {
  const deadline = Date.now() + opts.waitMs;
  for (;;) {
    if (await lock.acquire(key, token, opts.ttlMs)) return true;
    if (Date.now() >= deadline || opts.signal?.aborted) return false;
    const holder = await lock.holder(key);
    if (holder !== undefined && opts.retryWhile && !opts.retryWhile(holder)) return false;
    await pause(Math.max(1, Math.min(opts.pollMs ?? 20, deadline - Date.now())));
  }
}

export interface HeldLock {
  /** True once a renewal found the lock taken by someone else or expired. */
  readonly lost: boolean;
  /** Renews now; false (and `lost` set) when the lock was taken by another token or expired. */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

export interface HoldOptions {
  ttlMs: number;
  /** Renewal period; defaults to a third of the TTL. */
  renewEveryMs?: number;
  onLost?: () => void;
  /** The lock could not be released; it expires within ttlMs. */
  onReleaseFailed?: (e: unknown) => void;
}

/**
 * Acquires and keeps renewing the lock until released; undefined when another holder has it.
 * A holder that is a std:account:create (see CREATE_TOKEN_PREFIX) is waited for up to
 * `createWaitMs` (default 5 s): it holds the lock for a few platform calls only. Another run is
 * waited for up to `runWaitMs` (default 0): a run whose client just left is still taking its
 * processing flag down and frees the lock a moment later.
 */
export async function holdRunLock(
  lock: RunLock,
  key: string,
  token: string,
  opts: HoldOptions & { createWaitMs?: number; runWaitMs?: number },
): Promise<HeldLock | undefined> {
  const createWaitMs = opts.createWaitMs ?? 5000;
  const runWaitMs = opts.runWaitMs ?? 0;
  const started = Date.now();
  const taken = await acquireWithin(lock, key, token, {
    ttlMs: opts.ttlMs,
    waitMs: Math.max(createWaitMs, runWaitMs),
    pollMs: 50,
    retryWhile: (holder) => Date.now() - started < (holder.startsWith(CREATE_TOKEN_PREFIX) ? createWaitMs : runWaitMs),
  });
  if (!taken) return undefined;
  let lost = false;
  let stopped = false;
  const renew = async (): Promise<boolean> => {
    if (lost) return false;
    const ok = await lock.renew(key, token, opts.ttlMs);
    if (!ok && !stopped && !lost) {
      lost = true;
      opts.onLost?.();
    }
    return ok;
  };
  const timer = setInterval(
    () => {
      // A failed renewal (Redis blip) is retried on the next tick; the TTL covers two misses.
      renew().catch(() => undefined);
    },
    opts.renewEveryMs ?? Math.max(10, Math.floor(opts.ttlMs / 3)),
  );
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    renew,
    async release() {
      stopped = true;
      clearInterval(timer);
      // A release that fails (Redis unreachable) must not replace the run's own outcome: the lock
      // is no longer renewed, so it frees itself within its TTL.
      await lock.release(key, token).catch((e: unknown) => opts.onReleaseFailed?.(e));
    },
  };
}
