/**
 * Tasks run side by side under one signal: the first failure aborts the others, and once every task has
 * settled it is the error thrown (the aborts it caused are not what went wrong). No task is left running
 * after the call returns or throws.
 */
import { getMaxListeners, setMaxListeners } from 'node:events';

export async function sideBySide(
  parent: AbortSignal | undefined,
  tasks: readonly ((signal: AbortSignal) => Promise<unknown>)[],
): Promise<void> {
  const stop = new AbortController();
  const signal = parent ? AbortSignal.any([parent, stop.signal]) : stop.signal;
  // The tasks' calls listen on it as they did on the parent (command-scope.ts raises the command's limit).
  if (parent) setMaxListeners(getMaxListeners(parent), signal);
  let failed: { error: unknown } | undefined;
  await Promise.all(
    tasks.map(async (task) => {
      try {
        await task(signal);
      } catch (error) {
        if (failed) return;
        failed = { error };
        stop.abort(error);
      }
    }),
  );
  if (failed) throw failed.error;
}
