import type { Level } from '../config/fusion-config';
import type { LogSink } from '../ports/log-sink';
import type { LogFn, Logger } from '../ports/logger';
import { redactFields, secretValues, textRedactor } from '../../secrets/redaction';

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
  /**
   * The command's secret values (its configuration's): hidden wherever a line quotes them, in the
   * message or any field (an account id or a failing expression that contains the client secret).
   */
  secrets: readonly string[] = [],
): Logger {
  const hidden = secretValues(secrets);
  const clean = textRedactor(hidden);
  const make = (name: Level): LogFn => {
    const local = RANK[name] <= RANK[level];
    const external = sink !== undefined && RANK[name] <= RANK[sink.level];
    if (!local && !external) return () => undefined;
    return ((objOrMsg: Record<string, unknown> | string, msg?: string) => {
      const fields =
        typeof objOrMsg === 'string'
          ? {}
          : hidden.length === 0
            ? redactFields(objOrMsg)
            : withoutSecretText(redactFields(objOrMsg), clean);
      const text = clean(typeof objOrMsg === 'string' ? objOrMsg : (msg ?? ''));
      if (local) base[name](fields, text);
      if (external) sink.sink.write({ ...stamp, ...fields, level: name, time: new Date().toISOString(), msg: text });
    }) as LogFn;
  };
  return { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') };
}

/** `fields` with `clean` applied to every string, at any depth (arrays included). */
function withoutSecretText(value: Record<string, unknown>, clean: (s: string) => string): Record<string, unknown> {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return clean(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as Record<string, unknown>;
}
