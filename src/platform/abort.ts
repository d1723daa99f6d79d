/** Why a linked signal fired: the caller gave up, or a deadline passed. */
export type AbortCause = 'cancelled' | 'deadline';

class DeadlineExceeded extends Error {
  constructor(readonly timeoutMs: number) {
    super(`deadline of ${timeoutMs} ms passed`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * A signal that aborts when the parent aborts or `timeoutMs` passes, whichever comes first.
 * `dispose()` removes the listener and clears the timer, so nothing outlives the call (a
 * long-lived parent signal would otherwise collect one listener per request).
 */
export interface LinkedSignal {
  signal: AbortSignal;
  /** Which of the two fired, once aborted. */
  cause(): AbortCause | undefined;
  dispose(): void;
}

export function linkSignal(
  parent: AbortSignal | undefined | (AbortSignal | undefined)[],
  timeoutMs: number | undefined,
): LinkedSignal {
  const parents = (Array.isArray(parent) ? parent : [parent]).filter((p): p is AbortSignal => p !== undefined);
  const controller = new AbortController();
  let cause: AbortCause | undefined;
  const onParent = (ev?: Event): void => {
    if (cause) return;
    cause = 'cancelled';
    const from = (ev?.target as AbortSignal | undefined) ?? parents.find((p) => p.aborted);
    controller.abort(from?.reason);
  };
  let timer: NodeJS.Timeout | undefined;
  if (parents.some((p) => p.aborted)) onParent();
  else {
    for (const p of parents) p.addEventListener('abort', onParent, { once: true });
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      timer = setTimeout(
        () => {
          if (cause) return;
          cause = 'deadline';
          controller.abort(new DeadlineExceeded(timeoutMs));
        },
        Math.max(0, timeoutMs),
      );
    }
  }
  return {
    signal: controller.signal,
    cause: () => cause,
    dispose: () => {
      if (timer) clearTimeout(timer);
      for (const p of parents) p.removeEventListener('abort', onParent);
    },
  };
}

export class AbortedError extends Error {
  constructor() {
    super('aborted');
    this.name = 'AbortError';
  }
}

/** Resolves after `ms`, or rejects with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError());
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
