/**
 * `fusion-proxy aggregate --config FILE`: what the platform's "Aggregate accounts" button does, from
 * a terminal. It asks the platform (a real tenant or the simulator) to aggregate the connector's
 * source, found by the configuration's spConnectorInstanceId, and waits for the task. Against the
 * simulator started with --connector-url, that aggregation runs through the proxy server.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { findOwnSource } from '../core/aggregation/source-resolution';
import { parseFusionConfig } from '../core/config/fusion-config';
import { errorMessage, isFusionError } from '../core/errors';
import { silentLogger } from '../core/ports/logger';
import type { PlatformSource, TaskState } from '../core/ports/platform';
import { createPlatformClient } from '../platform/create-platform-client';
import { readPlatformSettings } from '../platform/platform-settings';
import { redactText, secretsOf } from '../secrets/redaction';

const USAGE = `usage: fusion-proxy aggregate --config FILE [--timeout SECONDS] [--poll-ms MS]

Starts an account aggregation of the connector's source on the platform named by the
configuration (baseurl, clientId, clientSecret, spConnectorInstanceId) and waits for its task.
Exit code 0 when the task succeeded (or succeeded with warnings), 1 when it failed.

  --config FILE       the connector configuration (JSON), e.g. from "fusion-proxy simulator --write-config"
  --timeout SECONDS   longest wait for the task (default 3600)
  --poll-ms MS        time between task polls (default 1000)
`;

export interface AggregateIo {
  stdout?: (text: string) => void;
  stderr?: (text: string) => void;
}

function positive(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`--${name} must be a whole number above 0, got "${raw}"`);
  return n;
}

async function readConfig(file: string): Promise<Record<string, unknown>> {
  const text = await readFile(file, 'utf8').catch((e: unknown) => {
    throw new RangeError(`cannot read the configuration ${file}: ${errorMessage(e)}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new RangeError(`the configuration ${file} is not valid JSON: ${errorMessage(e)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new RangeError(`the configuration ${file} must hold one JSON object`);
  return value as Record<string, unknown>;
}

export interface AggregationOutcome {
  source: string;
  task: string;
  state: TaskState;
  seconds: number;
  messages: string[];
}

/**
 * Starts an aggregation of the connector's source named by `config` and polls its task until it
 * ends (or `timeoutMs` passes: then the task's last state is returned).
 */
export async function aggregateConnectorSource(
  config: Record<string, unknown>,
  opts: {
    timeoutMs?: number;
    pollMs?: number;
    onStarted?: (source: PlatformSource, taskId: string) => void;
  } = {},
): Promise<AggregationOutcome> {
  const timeoutMs = opts.timeoutMs ?? 3_600_000;
  const platform = createPlatformClient(readPlatformSettings(config), { logger: silentLogger });
  try {
    const { own } = await findOwnSource(platform, parseFusionConfig(config), {});
    const started = Date.now();
    let task = await platform.startAggregation(own.id);
    opts.onStarted?.(own, task.id);
    while ((task.state === 'PENDING' || task.state === 'RUNNING') && Date.now() - started <= timeoutMs) {
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
      task = await platform.getTask(task.id);
    }
    return {
      source: own.name,
      task: task.id,
      state: task.state,
      seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
      messages: task.messages,
    };
  } finally {
    platform.close();
  }
}

export async function run(argv: string[], io: AggregateIo = {}): Promise<number> {
  const out = io.stdout ?? ((t: string) => void process.stdout.write(t));
  const err = io.stderr ?? ((t: string) => void process.stderr.write(t));
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        timeout: { type: 'string' },
        'poll-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (e) {
    err(`fusion-proxy aggregate: ${errorMessage(e)}\n${USAGE}`);
    return 2;
  }
  if (values['help']) {
    out(USAGE);
    return 0;
  }
  let secrets: string[] = [];
  try {
    const file = values['config'];
    if (typeof file !== 'string') throw new RangeError('--config FILE is required');
    const timeoutMs = positive(values['timeout'] as string | undefined, 'timeout', 3600) * 1000;
    const pollMs = positive(values['poll-ms'] as string | undefined, 'poll-ms', 1000);
    const config = await readConfig(file);
    secrets = secretsOf(config);
    const result = await aggregateConnectorSource(config, {
      timeoutMs,
      pollMs,
      onStarted: (source, task) => err(`aggregating source "${source.name}" (${source.id}): task ${task}\n`),
    });
    const messages = result.messages.map((m) => redactText(m, secrets));
    if (result.state === 'PENDING' || result.state === 'RUNNING')
      err(`fusion-proxy aggregate: task ${result.task} still ${result.state} after ${timeoutMs / 1000} s\n`);
    out(`${JSON.stringify({ ...result, messages })}\n`);
    return result.state === 'SUCCESS' || result.state === 'WARNING' ? 0 : 1;
  } catch (e) {
    const code = isFusionError(e) ? ` [${e.code}]` : '';
    err(`fusion-proxy aggregate: ${redactText(errorMessage(e), secrets)}${code}\n`);
    return e instanceof RangeError ? 2 : 1;
  }
}
