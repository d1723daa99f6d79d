import { getMaxListeners, setMaxListeners } from 'node:events';
import { sideBySide } from '../../src/core/aggregation/side-by-side';

/** Resolves once `signal` aborts (at once if it has). */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );

describe('sideBySide', () => {
  test('runs every task at once and returns once all are done', async () => {
    const done: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await sideBySide(undefined, [
      async () => {
        await gate;
        done.push(1);
      },
      async () => {
        release();
        done.push(2);
      },
    ]);
    expect(done).toEqual([2, 1]);
  });

  test('the first failure aborts the others, waits for them, and is the error thrown', async () => {
    const events: string[] = [];
    const reasons: unknown[] = [];
    const first = new Error('first');
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const running = sideBySide(undefined, [
      async () => {
        throw first;
      },
      async (signal) => {
        await aborted(signal);
        reasons.push(signal.reason);
        // Still running after the abort, until the test lets it end.
        await finished;
        events.push('second ended');
        throw new Error('second, from the abort');
      },
    ]);
    running.catch(() => events.push('sideBySide settled'));
    // A turn of timers: a sideBySide that did not wait would have settled by now.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(events).toEqual([]);
    finish();
    await expect(running).rejects.toBe(first);
    expect(events).toEqual(['second ended', 'sideBySide settled']);
    expect(reasons).toEqual([first]);
  });

  test("its signal allows as many listeners as the caller's: a run's pages in flight raise no leak warning", async () => {
    const caller = new AbortController();
    setMaxListeners(64, caller.signal);
    const limits: number[] = [];
    await sideBySide(caller.signal, [async (signal) => void limits.push(getMaxListeners(signal))]);
    expect(limits).toEqual([64]);
  });

  test("the caller's abort reaches every task", async () => {
    const caller = new AbortController();
    const seen: boolean[] = [];
    const running = sideBySide(
      caller.signal,
      [0, 1].map(() => async (signal: AbortSignal) => {
        await aborted(signal);
        seen.push(signal.aborted);
        throw new Error('cancelled');
      }),
    );
    caller.abort();
    await expect(running).rejects.toThrow('cancelled');
    expect(seen).toEqual([true, true]);
  });
});
