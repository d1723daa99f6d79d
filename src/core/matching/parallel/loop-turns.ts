/** Long synchronous work cut into steps, with a turn of the event loop between them (lock renewals, I/O). */
import type { Steps } from '../steps';

/** One turn of the event loop: timers (lock renewals) and I/O run before the next chunk. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The owner's work between two turns of the event loop. Phase 2 (the model's estimate and scoring over
 * every new account) held the loop 9.5 s at 100k x 100k on a loaded machine when it ran in one step;
 * phase 1 in chunks of a fixed number of accounts held it 6-8 s a chunk with a careless attribute list
 * (nothing mandatory, 20 ms an account at 5k), and at 20k on a loaded machine long enough for the run
 * lock (renewed every 20 s, TTL 60 s) to lapse.
 */
export const TURN_MS = 50;

/**
 * New accounts the owner blocks at most between two turns of the event loop; fewer once TURN_MS has
 * passed. A full probabilistic run estimates over every new account in one call (minutes at 100k):
 * without turns, the run lock's and the BullMQ job lock's renewals, progress and a cancel would all
 * wait for it, and both locks lapse. An account costs microseconds to tens of milliseconds (a careless
 * list, nothing mandatory), so the count alone bounds nothing; a turn costs microseconds.
 */
export const OWNER_CHUNK = 128;
/**
 * The same while slices are out: a child job this very process serves (queue mode) needs a few
 * Redis round trips on this thread before its matching thread can start, and with one turn per
 * OWNER_CHUNK it started only once the owner's whole slice of a batch of 250 was done.
 */
export const OWNER_CHUNK_WITH_SHARDS = 16;

/**
 * New accounts a call appends (prepares and indexes) between two turns of the event loop: appending
 * all of them at once held the loop about 5 s CPU at 100k accounts (1.6 s at 30k), about 50 us an
 * account, so a chunk is a few tens of milliseconds.
 */
export const APPEND_CHUNK = 512;

/** A stop() for a slice of phase 1 (SliceBlocker.blockSlice): true once `turnMs` passed on `now` since it was made. */
export function timeUp(turnMs: number, now: () => number): () => boolean {
  const until = now() + turnMs;
  return () => now() >= until;
}

/** Runs phase 2's steps, a turn of the event loop after each `turnMs` of them on `now`. */
export async function stepped<T>(
  steps: Steps<T>,
  turnMs = TURN_MS,
  now: () => number = () => performance.now(),
): Promise<T> {
  let since = now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (now() - since >= turnMs) {
      await turn();
      since = now();
    }
  }
}
