import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from '../support/free-port';
import { childEnv, NODE_MODULES, type ExecResult } from './connector-build';

export interface Spcx {
  url: string;
  log: () => string;
  close: () => Promise<void>;
}

/**
 * The SDK's dev server, `spcx run <connector.js> <port>`, as a developer starts it. It also spawns
 * `tsc --watch` in its working directory; an empty directory and a PATH without this project's
 * `.bin` keep that from compiling anything.
 */
export async function startSpcx(connectorFile: string, logLevel: string | undefined): Promise<Spcx> {
  const port = await freePort();
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => !p.includes('node_modules'))
    .join(delimiter);
  const child: ChildProcess = spawn(
    process.execPath,
    [join(NODE_MODULES, '@sailpoint/connector-sdk/dist/bin/spcx.js'), 'run', connectorFile, String(port)],
    {
      cwd: mkdtempSync(join(tmpdir(), 'fusion-spcx-cwd-')),
      env: childEnv(logLevel, { NODE_PATH: NODE_MODULES, PATH: path }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      log += d.toString('utf8');
      if (log.includes('listening at')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`spcx exited ${code} before listening: ${log}`)));
  });
  await ready;
  return {
    url: `http://127.0.0.1:${port}`,
    log: () => log,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        // spcx has no shutdown of its own: SIGKILL if SIGTERM is not enough.
        const force = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * What the platform receives from spcx for one command: NDJSON RawResponses, then spcx's plain-text error if it failed.
 */
export async function spcxInvoke(
  spcx: Spcx,
  type: string,
  input: unknown,
  config: Record<string, unknown>,
  onLine?: (line: Record<string, unknown>) => void,
): Promise<ExecResult> {
  const res = await fetch(`${spcx.url}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type, input, config }),
  });
  const result: ExecResult = { outputs: [], keepAlives: 0, count: 0, heap: [] };
  const decoder = new TextDecoder();
  let buffered = '';
  let tail = '';
  const take = (line: string): void => {
    if (!line.trim()) return;
    let parsed: { type?: string; data?: Record<string, unknown> } | undefined;
    try {
      parsed = JSON.parse(line) as { type?: string; data?: Record<string, unknown> };
    } catch {
      tail += `${line}\n`;
      return;
    }
    onLine?.(parsed as Record<string, unknown>);
    if (parsed.type === 'keepAlive') result.keepAlives += 1;
    else if (parsed.type === 'output') {
      result.count += 1;
      result.outputs.push(parsed.data ?? {});
    }
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      take(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  }
  take(buffered);
  const m = /^(\w+) error:/m.exec(tail);
  if (m) result.error = { type: m[1]!, message: tail, name: 'spcx' };
  else if (tail.trim())
    throw new Error(`spcx answered text that is neither NDJSON nor its error format: ${tail.slice(0, 500)}`);
  return result;
}
