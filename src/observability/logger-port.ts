/** The logging surface the core needs; pino loggers satisfy it. */
export interface LogFn {
  (obj: Record<string, unknown>, msg?: string): void;
  (msg: string): void;
}

export interface Logger {
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
}

const noop: LogFn = () => undefined;
export const silentLogger: Logger = { error: noop, warn: noop, info: noop, debug: noop };
