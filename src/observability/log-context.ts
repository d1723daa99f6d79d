import { AsyncLocalStorage } from 'node:async_hooks';
import type { LogFn, Logger } from './logger-port';

/** Fields stamped on every log line written while a request or job runs. */
export interface LogContext {
  requestId?: string;
  jobId?: string;
  command?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

/**
 * For a request's scope (api, connector). Not for a command's run: on Node 20 the first `run()`
 * switches on a promise hook for the whole process, which every promise of a command's per-item
 * async-generator path then pays (about a quarter of a worker's streaming CPU); commands get
 * their fields with `withLogFields` instead.
 */
export function runWithLogContext<T>(ctx: LogContext, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...ctx }, fn);
}

export function currentLogContext(): LogContext {
  return storage.getStore() ?? {};
}

/**
 * A logger that stamps `fields` on every record: the log context carried explicitly, without
 * AsyncLocalStorage. The caller's own fields of the same name win (none of the core's do).
 */
export function withLogFields(logger: Logger, fields: Readonly<Record<string, string>>): Logger {
  const stamp =
    (level: keyof Logger): LogFn =>
    (a: Record<string, unknown> | string, msg?: string): void => {
      if (typeof a === 'string') logger[level]({ ...fields }, a);
      else logger[level]({ ...fields, ...a }, msg);
    };
  return { error: stamp('error'), warn: stamp('warn'), info: stamp('info'), debug: stamp('debug') };
}
