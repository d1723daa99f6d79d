import pino, { type Logger as PinoLogger, type DestinationStream } from 'pino';
import { currentLogContext } from './log-context';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

/**
 * Secret paths pino removes from every record. Keys are matched at any of the first levels
 * an object is likely to be logged at (a config, a request body, an error's details).
 */
export const REDACT_PATHS: string[] = (() => {
  const keys = ['proxyPassword', 'clientSecret', 'password', 'secret', 'accessToken', 'access_token', 'authorization', 'client_secret'];
  const prefixes = ['', '*.', '*.*.', 'config.', 'body.config.', 'req.headers.'];
  return prefixes.flatMap((p) => keys.map((k) => `${p}${k}`));
})();

export function createLogger(opts: { level?: LogLevel; destination?: DestinationStream; name?: string } = {}): PinoLogger {
  return pino(
    {
      name: opts.name ?? 'fusion-proxy',
      level: opts.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Request/job id and command on every line, without threading a child logger everywhere.
      mixin: () => ({ ...currentLogContext() }),
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination,
  );
}
