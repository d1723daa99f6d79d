/**
 * Long synchronous work written as a generator that yields between bounded pieces (phase 2 of a
 * full run: the model's estimate and scoring over every new account, seconds at 100k). The
 * synchronous matcher drains it in one go; the run matcher gives the event loop a turn between
 * pieces, so lock renewals, progress and a cancel are not held up for the whole phase.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs the steps to the end in one go. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Random pairs, or blocked accounts, of the probabilistic model between two yields: a few milliseconds. */
export const MODEL_STEP = 2048;

/**
 * Yields every `every` calls: a loop of cheap iterations pays one counter per call, not a yield.
 * Usage: `const tick = ticker(2048); for (...) { ...; if (tick()) yield; }`.
 */
export function ticker(every: number): () => boolean {
  let n = 0;
  return () => {
    if (++n < every) return false;
    n = 0;
    return true;
  };
}
