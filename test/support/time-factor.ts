/**
 * The one time factor of the suite: TEST_TIME_FACTOR (a number > 0, default 1) scales every
 * readiness wait and per-test limit (the default one is set in setup-each-file.ts), so a loaded
 * machine (CI under contention, a laptop on battery) gets more time without a test changing. Nothing
 * here makes a test faster or slower: the waits end on events; the factor only moves the point at
 * which a wait gives up.
 */

/** Reads a TEST_TIME_FACTOR value: a number above 0, default 1; anything else throws. */
export function parseFactor(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`TEST_TIME_FACTOR must be a number above 0, got ${JSON.stringify(raw)}`);
  return n;
}

const TIME_FACTOR = parseFactor(process.env.TEST_TIME_FACTOR);

/** A limit in milliseconds, scaled by TEST_TIME_FACTOR. */
export function scaled(ms: number): number {
  return Math.round(ms * TIME_FACTOR);
}
