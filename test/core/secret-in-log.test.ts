import { createAccountReadCommand } from '../../src/core/commands/account-commands';
import type { LogRecord } from '../../src/core/ports/log-sink';
import { createLogger } from '../../src/observability/logger';
import { harness, failure } from './support';

/**
 * A command error that quotes the client secret (an account id, a failing expression) is told to
 * the client redacted; the process log and the external log sink must not have it in clear either.
 * Through the real pino logger at the default level (info), as `serve` writes it.
 */
describe('a secret quoted by a failing command', () => {
  const SECRET = 'top-secret-value';

  it.each(['info', 'debug'] as const)(
    'never reaches the process log or the external sink in clear (LOG_LEVEL %s)',
    async (level) => {
      const h = harness({
        clientSecret: SECRET,
        externalLoggingEnabled: true,
        externalLoggingUrl: 'https://logs.example',
      });
      const external: LogRecord[] = [];
      h.deps.externalLogSink = () => ({ write: (r) => void external.push(r), close: async () => undefined });
      const lines: string[] = [];
      const base = createLogger({ level, destination: { write: (s: string) => void lines.push(s) } });
      const read = createAccountReadCommand(h.deps);
      const err = await failure(
        read({ identity: `user-${SECRET}` }, h.config, {
          signal: new AbortController().signal,
          logger: base,
          jobId: 'job-1',
          progress: () => undefined,
        }),
      );
      expect(err.code).toBe('ACCOUNT_NOT_FOUND');
      const logged = lines.join('\n');
      // The failure was logged, with the account named (minus the secret).
      expect(logged).toContain('Command failed');
      expect(logged).toContain('user-[redacted]');
      expect(logged).not.toContain(SECRET);
      expect(external.length).toBeGreaterThan(0);
      expect(JSON.stringify(external)).toContain('user-[redacted]');
      expect(JSON.stringify(external)).not.toContain(SECRET);
    },
  );
});
