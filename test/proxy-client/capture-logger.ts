import type { LogFn, Logger } from '../../src/core/ports/logger';

export interface CapturedLine {
  level: 'error' | 'warn' | 'info' | 'debug';
  text: string;
}

/** A Logger that keeps every line as the JSON it would print, so tests can search it for secrets. */
export function captureLogger(): Logger & { lines: CapturedLine[] } {
  const lines: CapturedLine[] = [];
  const fn =
    (level: CapturedLine['level']): LogFn =>
    (a: Record<string, unknown> | string, msg?: string) => {
      lines.push({ level, text: typeof a === 'string' ? a : JSON.stringify({ ...a, msg }) });
    };
  return { lines, error: fn('error'), warn: fn('warn'), info: fn('info'), debug: fn('debug') };
}
