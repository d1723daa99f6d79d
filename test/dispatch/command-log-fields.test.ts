import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { CommandOutput, CommandRunner } from '../../src/core/command-runner';
import { createCoreRunner } from '../../src/core/core-runner';
import type { LogRecord, LogSink } from '../../src/core/ports/log-sink';
import type { LogFn, Logger } from '../../src/core/ports/logger';
import type { ProxyCommand } from '../../src/dispatch/command-dispatcher';
import { executeCommand } from '../../src/dispatch/command-execution';
import type { OutputSink } from '../../src/dispatch/output-sink';
import { currentLogContext, runWithLogContext } from '../../src/observability/log-context';
import { harness } from '../core/support';

interface Line {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

function recordingLogger(lines: Line[]): Logger {
  const make =
    (level: string): LogFn =>
    (a: Record<string, unknown> | string, msg?: string): void => {
      lines.push(typeof a === 'string' ? { level, msg: a, fields: {} } : { level, msg: msg ?? '', fields: a });
    };
  return { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') };
}

class NullSink implements OutputSink {
  items = 0;
  write(): undefined {
    this.items++;
    return undefined;
  }
  progress(): void {}
  async end(): Promise<void> {}
  async fail(): Promise<void> {}
}

class MemoryLogSink implements LogSink {
  readonly records: LogRecord[] = [];
  write(r: LogRecord): void {
    this.records.push(r);
  }
  async close(): Promise<void> {}
}

function command(requestId: string, config: Record<string, unknown> = {}): ProxyCommand {
  return { type: 'std:account:list', input: {}, config, requestId };
}

describe('job id and command on every log line of a command, without AsyncLocalStorage', () => {
  it('lines of the transport and of the runner carry both; the run enters no log context', async () => {
    const lines: Line[] = [];
    const seen: unknown[] = [];
    const runner: CommandRunner = (_type, _input, _config, ctx) =>
      (async function* gen(): AsyncGenerator<CommandOutput> {
        // On Node 20 a context here would mean AsyncLocalStorage.run(): a promise hook for the whole process.
        seen.push(currentLogContext());
        ctx.logger.info({ page: 1 }, 'read a page');
        ctx.logger.warn('no fields');
        yield { id: 1 };
        throw new Error('boom');
      })();
    const outcome = await executeCommand(runner, command('job-7'), new NullSink(), {
      signal: new AbortController().signal,
      logger: recordingLogger(lines),
      component: 'worker',
    });
    expect(outcome).toBe('error');
    expect(seen).toEqual([{}]);
    expect(lines.map((l) => l.msg)).toEqual(['read a page', 'no fields', 'command failed', 'command finished']);
    for (const l of lines) expect(l.fields).toMatchObject({ jobId: 'job-7', command: 'std:account:list' });
    expect(lines[0]!.fields).toMatchObject({ page: 1 });
  });

  it('records copied to the external log sink carry them too, through the core command scope', async () => {
    const sink = new MemoryLogSink();
    const h = harness({
      logLevel: 'Info',
      externalLoggingEnabled: true,
      externalLoggingUrl: 'http://logs.example.com',
      externalLoggingLevel: 'Info',
    });
    h.deps.externalLogSink = () => sink;
    const ldap = h.fake.addSource('LDAP');
    h.fake.addSource('Contractors');
    h.fake.addAccount(ldap, 'a1', { firstName: 'x' });
    const lines: Line[] = [];
    const out = new NullSink();
    const runner = createCoreRunner({ 'std:account:list': createAccountListCommand(h.deps) });
    const outcome = await executeCommand(runner, command('job-8', h.config), out, {
      signal: new AbortController().signal,
      logger: recordingLogger(lines),
      component: 'worker',
    });
    expect(outcome).toBe('success');
    expect(sink.records.length).toBeGreaterThan(0);
    expect(sink.records.some((r) => r.msg === 'Aggregation finished')).toBe(true);
    for (const r of sink.records) expect(r).toMatchObject({ jobId: 'job-8', command: 'std:account:list' });
    expect(lines.length).toBeGreaterThan(sink.records.length - 1);
    for (const l of lines) expect(l.fields).toMatchObject({ jobId: 'job-8', command: 'std:account:list' });
  });

  it("a request's own context (the api's request id) still reaches the command's lines beside them", async () => {
    const lines: Line[] = [];
    const runner: CommandRunner = (_type, _input, _config, ctx) =>
      (async function* gen(): AsyncGenerator<CommandOutput> {
        ctx.logger.info({ requestId: currentLogContext().requestId }, 'inside');
        yield { id: 1 };
      })();
    await runWithLogContext({ requestId: 'req-1' }, () =>
      executeCommand(runner, command('job-9'), new NullSink(), {
        signal: new AbortController().signal,
        logger: recordingLogger(lines),
        component: 'embedded',
      }),
    );
    expect(lines[0]!.fields).toMatchObject({ requestId: 'req-1', jobId: 'job-9', command: 'std:account:list' });
  });
});
