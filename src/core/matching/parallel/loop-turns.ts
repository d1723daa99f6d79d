/** Long synchronous work cut into steps, with a turn of the event loop between them (lock renewals, I/O). */
import type { Steps } from '../steps';

/** One turn of the event loop: timers (lock renewals) and I/O run before the next chunk. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Phase 2's work between two turns of the event loop. Phase 2 (the model's estimate and scoring over
 * every new account) held the loop 9.5 s at 100k x 100k on a loaded machine when it ran in one step.
 */
const PHASE2_SLICE_MS = 50;

/** Runs phase 2's steps, a turn of the event loop after each PHASE2_SLICE_MS of them. */
export async function stepped<T>(steps: Steps<T>): Promise<T> {
  let since = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() - since >= PHASE2_SLICE_MS) {
      await turn();
      since = performance.now();
    }
  }
}
