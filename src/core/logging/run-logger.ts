import type { Level } from '../config/fusion-config';
import type { LogSink } from '../ports/log-sink';
import type { LogFn, Logger } from '../ports/logger';

const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

// Keys never forwarded to any log destination, whatever a caller passes.
const SECRET_KEY = /secret|password|token|authorization/i;

function scrub(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (SECRET_KEY.test(k)) out[k] = '[redacted]';
    else if (v instanceof Error) out[k] = { message: v.message, name: v.name };
    else if (v && typeof v === 'object' && !Array.isArray(v)) out[k] = scrub(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

/**
 * The logger of one command: the spec's levels (Error: critical errors only, Warn: + warnings,
 * Info: + information, Debug: everything) applied with "logLevel", and a copy of records at or
 * above "External logging level" sent to the external sink when one is configured. The level is
 * checked before anything is formatted.
 */
export function createRunLogger(base: Logger, level: Level, sink?: { sink: LogSink; level: Level }): Logger {
  const make = (name: Level): LogFn => {
    const local = RANK[name] <= RANK[level];
    const external = sink !== undefined && RANK[name] <= RANK[sink.level];
    if (!local && !external) return () => undefined;
    return ((objOrMsg: Record<string, unknown> | string, msg?: string) => {
      const fields = typeof objOrMsg === 'string' ? {} : scrub(objOrMsg);
      const text = typeof objOrMsg === 'string' ? objOrMsg : (msg ?? '');
      if (local) base[name](fields, text);
      if (external) sink.sink.write({ ...fields, level: name, time: new Date().toISOString(), msg: text });
    }) as LogFn;
  };
  return { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') };
}
