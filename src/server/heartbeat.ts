import type { OutputChunk } from '../dispatch/command-dispatcher';

/** A blank NDJSON line: carries nothing, keeps proxies and clients from timing out an idle response. */
export const HEARTBEAT_CHUNK: OutputChunk = Object.freeze({ data: '\n', items: 0 });

const TICK = Symbol('tick');

/** The longest silence the wire contract allows (DESIGN: a blank line at least every 30 s). */
const MAX_SILENCE_MS = 30_000;

/**
 * How long the response may stay uncommitted before the first heartbeat: twice the interval, at
 * most the contract's 30 s. The first byte commits the `200`; until then a command that fails (a
 * wrong URL, bad credentials, a missing source) still answers a JSON error with its status, which
 * every client reads, instead of a reason line only our client reads.
 */
export function firstHeartbeatDelay(intervalMs: number): number {
  return Math.max(intervalMs, Math.min(2 * intervalMs, MAX_SILENCE_MS));
}

/**
 * Passes chunks through and inserts a blank line whenever the source has been silent for
 * `intervalMs` (before the first chunk: for `firstHeartbeatDelay`). Heartbeats do not touch the
 * source, so they never count as command progress.
 */
export async function* withHeartbeat(
  source: AsyncIterable<OutputChunk>,
  intervalMs: number,
): AsyncGenerator<OutputChunk> {
  const it = source[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<OutputChunk>> | undefined;
  let done = false;
  let committed = false;
  try {
    for (;;) {
      pending ??= it.next();
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<typeof TICK>((resolve) => {
        timer = setTimeout(() => resolve(TICK), committed ? intervalMs : firstHeartbeatDelay(intervalMs));
      });
      const winner = await Promise.race([pending, tick]).finally(() => clearTimeout(timer));
      committed = true;
      if (winner === TICK) {
        yield HEARTBEAT_CHUNK;
        continue;
      }
      pending = undefined;
      if (winner.done) {
        done = true;
        return;
      }
      yield winner.value;
    }
  } finally {
    if (!done) {
      // The consumer left early: settle the source without waiting for it (its signal stops it).
      pending?.catch(() => undefined);
      void it.return?.()?.catch(() => undefined);
    }
  }
}
