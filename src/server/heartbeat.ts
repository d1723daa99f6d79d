import type { OutputChunk } from '../dispatch/command-dispatcher';

/** A blank NDJSON line: carries nothing, keeps proxies and clients from timing out an idle response. */
export const HEARTBEAT_CHUNK: OutputChunk = Object.freeze({ data: '\n', items: 0 });

const TICK = Symbol('tick');

/**
 * Passes chunks through and inserts a blank line whenever the source has been silent for
 * `intervalMs`. Heartbeats do not touch the source, so they never count as command progress.
 */
export async function* withHeartbeat(
  source: AsyncIterable<OutputChunk>,
  intervalMs: number,
): AsyncGenerator<OutputChunk> {
  const it = source[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<OutputChunk>> | undefined;
  let done = false;
  try {
    for (;;) {
      pending ??= it.next();
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<typeof TICK>((resolve) => {
        timer = setTimeout(() => resolve(TICK), intervalMs);
      });
      const winner = await Promise.race([pending, tick]).finally(() => clearTimeout(timer));
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
