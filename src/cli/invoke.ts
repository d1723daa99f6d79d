import { readFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { COMMAND_TYPES, isCommandType } from '../core/command-types';
import { errorMessage, isFusionError } from '../core/errors';
import type { LogFn, Logger } from '../core/ports/logger';
import { invokeProxy } from '../proxy-client/proxy-client';
import { redactText, secretValues, secretsOf } from '../secrets/redaction';

/**
 * `fusion-proxy invoke`: sends one command to a proxy server, as the platform-side connector
 * would, and prints the items as NDJSON on stdout as they arrive.
 */
export const INVOKE_USAGE = `usage: fusion-proxy invoke --type TYPE --config FILE [--input FILE] [--url URL] [--password PASSWORD]
                           [--ca FILE] [--connect-timeout-ms N] [--idle-timeout-ms N]

Sends one command to a fusion-proxy server and prints its items as NDJSON on stdout, one line
per item as it arrives. Errors go to stderr; the exit code is 0 on success, 1 when the command
fails, 2 on a usage error.

  --type TYPE            one of: ${COMMAND_TYPES.join(', ')}
  --config FILE          JSON file with the connector configuration (sent as "config")
  --input FILE           JSON file with the command input (default {})
  --url URL              proxy URL (default: proxyUrl of the configuration)
  --password PASSWORD    proxy password (default: env PROXY_PASSWORD, then proxyPassword of the
                         configuration); prefer the env so the secret stays out of shell history
  --ca FILE              extra trusted CA certificate (PEM) for an https URL
  --connect-timeout-ms N connection (and TLS handshake) timeout, default 30000
  --idle-timeout-ms N    longest silence from the server, default 360000
`;

export interface InvokeIo {
  stdout: Writable;
  stderr: Writable;
  env: Readonly<Record<string, string | undefined>>;
}

class UsageError extends Error {}

function write(stream: Writable, text: string): Promise<void> {
  if (stream.write(text)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onDrain = (): void => {
      stream.off('error', onError);
      resolve();
    };
    const onError = (e: Error): void => {
      stream.off('drain', onDrain);
      reject(e);
    };
    stream.once('drain', onDrain);
    stream.once('error', onError);
  });
}

async function readJsonObject(file: string, what: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read the ${what} file ${file}: ${errorMessage(e)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`the ${what} file ${file} is not valid JSON: ${errorMessage(e)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`the ${what} file ${file} must contain a JSON object`);
  return value as Record<string, unknown>;
}

function timeout(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new UsageError(`--${name} must be a positive integer (milliseconds), got ${JSON.stringify(value)}`);
  return n;
}

/** Warnings (an empty result) and errors as plain lines on stderr; debug and info stay quiet. */
function stderrLogger(stderr: Writable, secrets: () => string[]): Logger {
  const line =
    (label: string): LogFn =>
    (a: Record<string, unknown> | string, msg?: string) => {
      const text = typeof a === 'string' ? a : (msg ?? '');
      stderr.write(`fusion-proxy invoke: ${label}: ${redactText(text, secrets())}\n`);
    };
  const quiet: LogFn = () => undefined;
  return { error: line('error'), warn: line('warning'), info: quiet, debug: quiet };
}

export async function run(
  argv: string[],
  io: InvokeIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  let secrets: string[] = [];
  const ac = new AbortController();
  const onSigint = (): void => ac.abort();
  try {
    const { values } = (() => {
      try {
        return parseArgs({
          args: argv,
          strict: true,
          allowPositionals: false,
          options: {
            url: { type: 'string' },
            password: { type: 'string' },
            type: { type: 'string' },
            config: { type: 'string' },
            input: { type: 'string' },
            ca: { type: 'string' },
            'connect-timeout-ms': { type: 'string' },
            'idle-timeout-ms': { type: 'string' },
            help: { type: 'boolean', short: 'h' },
          },
        });
      } catch (e) {
        throw new UsageError(errorMessage(e));
      }
    })();
    if (values.help) {
      await write(io.stdout, INVOKE_USAGE);
      return 0;
    }
    if (!values.type) throw new UsageError('--type is required');
    if (!isCommandType(values.type))
      throw new UsageError(
        `unknown command type ${JSON.stringify(values.type)}; expected one of: ${COMMAND_TYPES.join(', ')}`,
      );
    if (!values.config) throw new UsageError('--config FILE is required');
    const config = await readJsonObject(values.config, 'config');
    const input = values.input ? await readJsonObject(values.input, 'input') : {};
    const url =
      values.url ?? (typeof config.proxyUrl === 'string' && config.proxyUrl.trim() ? config.proxyUrl : undefined);
    if (!url) throw new UsageError('no proxy URL: pass --url or set proxyUrl in the configuration');
    const envPassword = io.env.PROXY_PASSWORD;
    const password =
      values.password ??
      (envPassword && envPassword.length > 0
        ? envPassword
        : typeof config.proxyPassword === 'string'
          ? config.proxyPassword
          : '');
    if (!password)
      throw new UsageError(
        'no proxy password: set env PROXY_PASSWORD, pass --password, or set proxyPassword in the configuration',
      );
    secrets = secretValues([password, ...secretsOf(config)]);
    const ca = values.ca
      ? await readFile(values.ca, 'utf8').catch((e: unknown) => {
          throw new UsageError(`cannot read the CA file ${values.ca}: ${errorMessage(e)}`);
        })
      : undefined;
    const connectMs = timeout(values['connect-timeout-ms'], 'connect-timeout-ms');
    const idleMs = timeout(values['idle-timeout-ms'], 'idle-timeout-ms');

    process.once('SIGINT', onSigint);
    io.stdout.once('error', onSigint); // a closed pipe (e.g. `| head`) ends the call
    await invokeProxy(
      {
        url,
        password,
        type: values.type,
        input,
        config,
        ...(ca !== undefined ? { ca } : {}),
        timeouts: { ...(connectMs ? { connectMs } : {}), ...(idleMs ? { idleMs } : {}) },
        signal: ac.signal,
        logger: stderrLogger(io.stderr, () => secrets),
      },
      (item) => write(io.stdout, `${JSON.stringify(item)}\n`),
    );
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`fusion-proxy invoke: ${redactText(e.message, secrets)}\n\n${INVOKE_USAGE}`);
      return 2;
    }
    const code = isFusionError(e) ? ` [${e.code}]` : '';
    io.stderr.write(`fusion-proxy invoke: ${redactText(errorMessage(e), secrets)}${code}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
    io.stdout.off('error', onSigint);
  }
}
