import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { errorMessage, isFusionError } from '../core/errors';
import { proxyItems } from '../proxy-client/proxy-client';
import { redactText } from '../secrets/redaction';

export const CHECK_USAGE = `usage: fusion-proxy check --url URL

Checks a deployed proxy without platform credentials (the chart's \`helm test\` runs it): sends
test connection with the proxy password (env PROXY_PASSWORD) and an empty connector
configuration. The answer must come from a worker: the api accepted the password, queued the
command, and a worker ran it and reported the empty configuration (CONFIG_INVALID, HTTP 400: only
the command reads the configuration, so that code can only come from where it ran).
Any other answer (refused password, no worker, queue down, connection failure) fails with exit 1.
With platform credentials, run \`fusion-proxy invoke --type std:test-connection --config FILE\` instead.
`;

export interface CheckIo {
  stdout: Writable;
  stderr: Writable;
  env: Readonly<Record<string, string | undefined>>;
}

export async function run(
  argv: string[],
  io: CheckIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  let url: string | undefined;
  try {
    url = parseArgs({ args: argv, strict: true, options: { url: { type: 'string' } } }).values.url;
  } catch (e) {
    io.stderr.write(`fusion-proxy check: ${errorMessage(e)}\n\n${CHECK_USAGE}`);
    return 2;
  }
  const password = io.env.PROXY_PASSWORD ?? '';
  if (!url || !password) {
    io.stderr.write(`fusion-proxy check: --url and env PROXY_PASSWORD are required\n\n${CHECK_USAGE}`);
    return 2;
  }
  try {
    for await (const item of proxyItems({ url, password, type: 'std:test-connection', input: {}, config: {} })) {
      io.stdout.write(`fusion-proxy check: ${url} answered test connection: ${JSON.stringify(item)}\n`);
    }
    return 0;
  } catch (e) {
    const status = isFusionError(e) ? e.details.status : undefined;
    // The api never reads the connector configuration: CONFIG_INVALID (400, its status in the table)
    // can only be the worker's answer.
    if (isFusionError(e, 'CONFIG_INVALID') && status === 400) {
      io.stdout.write(
        `fusion-proxy check: ${url} ok: the api accepted the password and queued test connection; a worker ran it and reported the empty configuration, as expected\n`,
      );
      return 0;
    }
    const code = isFusionError(e) ? ` [${e.code}]` : '';
    io.stderr.write(`fusion-proxy check: ${url} failed: ${redactText(errorMessage(e), [password])}${code}\n`);
    return 1;
  }
}
