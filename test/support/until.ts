/**
 * The suite's one wait for a condition that has no event to await (a key in Redis, a line in a
 * child's log, a gauge): it checks every `everyMs` and fails, naming what it waited for, once the
 * limit has passed. The limit is written at its quiet-machine value and scaled here by
 * TEST_TIME_FACTOR (time-factor.ts), like every other readiness wait.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { scaled } from './time-factor';

/**
 * Resolves once `check` holds; rejects with `not within … ms: <what>` when the limit passes first.
 * `ms`: the limit on a quiet machine (scaled here); `everyMs`: how often to check.
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 10_000,
  everyMs = 25,
): Promise<void> {
  await untilValue(what, async () => ((await check()) ? true : undefined), ms, everyMs);
}

/** The first value other than undefined that `get` returns, under the same limit as until(). */
export async function untilValue<T>(
  what: string,
  get: () => T | undefined | Promise<T | undefined>,
  ms = 10_000,
  everyMs = 25,
): Promise<T> {
  const limit = scaled(ms);
  const end = Date.now() + limit;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`not within ${limit} ms: ${what}`);
    await delay(everyMs);
  }
}
