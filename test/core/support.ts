import type { CommandContext, CommandOutput } from '../../src/core/command-runner';
import type { CoreCommand } from '../../src/core/core-runner';
import type { CoreDeps } from '../../src/core/core-deps';
import type { AggregationSummary } from '../../src/core/aggregation/aggregation-summary';
import type { LogFn, Logger } from '../../src/core/ports/logger';
import { MemoryRunLock } from '../../src/locks/memory-run-lock';
import { FakePlatform } from '../support/fake-platform';

export interface LogLine {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

function recordingLogger(lines: LogLine[]): Logger {
  const make = (level: string): LogFn =>
    ((a: Record<string, unknown> | string, b?: string) => {
      if (typeof a === 'string') lines.push({ level, msg: a, fields: {} });
      else lines.push({ level, msg: b ?? '', fields: a });
    }) as LogFn;
  return { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') };
}

export function context(lines: LogLine[] = [], signal = new AbortController().signal): CommandContext {
  return { signal, logger: recordingLogger(lines), jobId: 'job-1', progress: () => undefined };
}

export async function collect(iter: AsyncIterable<CommandOutput>): Promise<CommandOutput[]> {
  const out: CommandOutput[] = [];
  for await (const item of iter) out.push(item);
  return out;
}

export async function failure(
  iter: AsyncIterable<CommandOutput>,
): Promise<Error & { code?: string; details?: Record<string, unknown> }> {
  try {
    await collect(iter);
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('the command succeeded');
}

export interface Harness {
  fake: FakePlatform;
  deps: CoreDeps;
  summaries: AggregationSummary[];
  own: ReturnType<FakePlatform['addSource']>;
  config: Record<string, unknown>;
}

/** A fake tenant: the connector's own source, sources Contractors and LDAP, and a few identities. */
export function harness(extra: Record<string, unknown> = {}): Harness {
  const fake = new FakePlatform();
  const own = fake.addSource('Identity Fusion', {
    authoritative: true,
    connectorAttributes: { spConnectorInstanceId: 'inst-1' },
    owner: { id: 'owner-1', name: 'owner' },
  });
  const summaries: AggregationSummary[] = [];
  const deps: CoreDeps = {
    platform: () => fake,
    runLock: new MemoryRunLock(),
    onAggregationSummary: (s) => summaries.push(s),
    taskPollMs: 5,
  };
  const config = {
    baseurl: 'https://acme.api.example.com',
    clientId: 'cid',
    clientSecret: 'top-secret-value',
    spConnectorInstanceId: 'inst-1',
    sources: ['Contractors', 'LDAP'],
    ...extra,
  };
  return { fake, deps, summaries, own, config };
}

export function run(
  command: CoreCommand,
  h: Harness,
  input: Record<string, unknown> = {},
  lines: LogLine[] = [],
  config: Record<string, unknown> = h.config,
): AsyncIterable<CommandOutput> {
  return command(input, config, context(lines));
}
