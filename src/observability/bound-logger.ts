import type { LogFn, Logger } from './logger-port';

type Level = keyof Logger;
const LEVELS: readonly Level[] = ['error', 'warn', 'info', 'debug'];

/**
 * The one way to hand a logger to code that calls `logger.info(...)` detached or late: every call
 * is made as a method call on the logger `resolve()` returns (pino's methods read `this`, so a
 * detached `const log = pino.info; log(...)` throws), and a logger that throws never takes the
 * caller down with it: a failed log line must not replace the error being reported.
 */
export function boundLogger(resolve: () => Logger, onFailure: (e: unknown) => void = reportOnce()): Logger {
  const forward =
    (level: Level): LogFn =>
    (a: Record<string, unknown> | string, msg?: string): void => {
      try {
        const target = resolve();
        if (typeof a === 'string') target[level](a);
        else target[level](a, msg);
      } catch (e) {
        onFailure(e);
      }
    };
  const out = {} as Record<Level, LogFn>;
  for (const level of LEVELS) out[level] = forward(level);
  return out;
}

/** Logging failures go to stderr once per process: enough to notice, never a flood. */
function reportOnce(): (e: unknown) => void {
  let reported = false;
  return (e) => {
    if (reported) return;
    reported = true;
    process.stderr.write(
      `fusion-proxy: a log call failed and was dropped: ${e instanceof Error ? e.message : String(e)}\n`,
    );
  };
}
