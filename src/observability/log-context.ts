import { AsyncLocalStorage } from 'node:async_hooks';

/** Fields stamped on every log line written while a request or job runs. */
export interface LogContext {
  requestId?: string;
  jobId?: string;
  command?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

export function runWithLogContext<T>(ctx: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...ctx }, fn);
}

export function currentLogContext(): LogContext {
  return storage.getStore() ?? {};
}
