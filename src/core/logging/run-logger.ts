import type { Level } from '../config/fusion-config';
import type { LogSink } from '../ports/log-sink';
import type { LogFn, Logger } from '../ports/logger';
import { redactFields } from '../../secrets/redaction';

const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/**
 * The logger of one command: the spec's levels (Error: critical errors only, Warn: + warnings,
 * Info: + information, Debug: everything) applied with "logLevel", and a copy of records at or
 * above "External logging level" sent to the external sink when one is configured. The level is
 * checked before anything is formatted.
 */
export function createRunLogger(
  base: Logger,
  level: Level,
  sink?: { sink: LogSink; level: Level },
  /** Stamped on external records (the transport's job id and command; `base` stamps its own lines). */
  stamp: Readonly<Record<string, string>> = {},
): Logger {
  const make = (name: Level): LogFn => {
    const local = RANK[name] <= RANK[level];
    const external = sink !== undefined && RANK[name] <= RANK[sink.level];
    if (!local && !external) return () => undefined;
    return ((objOrMsg: Record<string, unknown> | string, msg?: string) => {
      const fields = typeof objOrMsg === 'string' ? {} : redactFields(objOrMsg);
      const text = typeof objOrMsg === 'string' ? objOrMsg : (msg ?? '');
      if (local) base[name](fields, text);
      if (external) sink.sink.write({ ...stamp, ...fields, level: name, time: new Date().toISOString(), msg: text });
    }) as LogFn;
  };
  return { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') };
}
