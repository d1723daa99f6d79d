import http from 'node:http';
import net from 'node:net';
import { Redis } from 'ioredis';
import { parseStreamErrorLine, type StreamErrorLine } from '../../src/errors/stream-error-line';
import { createLogger } from '../../src/observability/logger';
import { loadEnv, type ServerEnv } from '../../src/server/env';
import { redisTarget } from '../../src/server/redis-settings';
import { startServer, type RunningServer } from '../../src/server/server';
import { CommandWorker, type CommandWorkerOptions } from '../../src/queue/command-worker';
import { JobCrypto } from '../../src/queue/job-crypto';
import { silentLogger } from '../../src/core/ports/logger';
import { redisUrl, uniquePrefix } from '../support/redis';
import { ScriptedRunner } from '../support/scripted-runner';

export type Mode = 'embedded' | 'queue';
/** The job-encryption key of a queue-mode harness. */
export const HARNESS_JOB_KEY = 'a'.repeat(64);
export const PASSWORD = 'correct-horse-battery-staple';
export const CLIENT_SECRET = 'cs-very-secret-value-7f3a9b';

export interface Harness {
  server: RunningServer;
  runner: ScriptedRunner;
  env: ServerEnv;
  logs: string[];
  base: string;
  redis?: Redis;
  close(): Promise<void>;
}

/** Starts the real server (startServer) in the given mode on 127.0.0.1:0 with a scripted runner. */
export async function startHarness(mode: Mode, overrides: Record<string, string> = {}): Promise<Harness> {
  const runner = new ScriptedRunner();
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void logs.push(s) } });
  const env = loadEnv({
    PORT: '0',
    HOST: '127.0.0.1',
    PROXY_PASSWORD: PASSWORD,
    PROXY_PATH: '/proxy',
    HEARTBEAT_INTERVAL_MS: '30000',
    REQUEST_TIMEOUT_MS: '10000',
    SHUTDOWN_GRACE_MS: '2000',
    QUEUE_NAME: uniquePrefix('q'),
    ...(mode === 'queue' ? { REDIS_URL: redisUrl(), JOB_ENCRYPTION_KEY: HARNESS_JOB_KEY } : {}),
    ...overrides,
  });
  const server = await startServer(env, { runner: runner.runner, logger });
  // The Redis the server uses (an override may name a Redis of the test's own), reached as the server
  // reaches it: its credentials and CA, and its connector. A connection with the default CA to a
  // private-CA Redis failed twice per socket under load (certificate, then the server's decode-error
  // alert) and, without the server's connector, the second error crashed the test (redis-tls-auth).
  const target = mode === 'queue' ? redisTarget(env) : undefined;
  const redis = target ? new Redis(target.url, { ...target.options, maxRetriesPerRequest: 1 }) : undefined;
  // The refusal tests' connection never gets ready and reports it through the server's logs.
  redis?.on('error', () => undefined);
  return {
    server,
    runner,
    env,
    logs,
    base: server.url,
    redis,
    async close() {
      await server.close();
      // quit() queues behind a connection that never became ready (a refused CA or password).
      if (redis?.status === 'ready') await redis.quit();
      else redis?.disconnect();
    },
  };
}

export function commandBody(
  script: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    type: 'std:account:list',
    input: { script },
    config: {
      proxyEnabled: true,
      proxyPassword: PASSWORD,
      baseurl: 'https://tenant.example',
      clientId: 'cid',
      clientSecret: CLIENT_SECRET,
    },
    ...extra,
  };
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** True when the response ended normally; false when the connection was cut mid-body. */
  complete: boolean;
}

/** POSTs with node http and reads the whole response, noting whether it ended or was cut. */
export function post(
  url: string,
  body: unknown,
  opts: { onChunk?: (s: string, req: http.ClientRequest, res: http.IncomingMessage) => void } = {},
): Promise<HttpResult> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    let responded = false;
    const req = http.request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        responded = true;
        let text = '';
        let settled = false;
        const finish = (complete: boolean): void => {
          if (settled) return;
          settled = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, complete });
        };
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          opts.onChunk?.(d, req, res);
        });
        res.on('end', () => finish(true));
        res.on('error', () => finish(false));
        res.on('close', () => finish(res.complete));
      },
    );
    // A reset after the response started is how the server breaks off a failed stream: an
    // incomplete response, not a failed request.
    req.on('error', (e) => (responded ? undefined : reject(e)));
    req.end(payload);
  });
}

/**
 * One request over a raw socket in the given HTTP version. `reset` says whether the connection
 * ended with a TCP reset (ECONNRESET) rather than a clean close: the only way an HTTP/1.0 client
 * (or a hop that speaks 1.0) can tell a broken-off answer from a complete one.
 */
export function rawRequest(
  url: string,
  body: unknown,
  httpVersion: '1.0' | '1.1',
): Promise<{ raw: string; reset: boolean }> {
  const u = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname);
    let raw = '';
    let reset = false;
    socket.setEncoding('latin1');
    socket.on('connect', () => {
      socket.write(
        `POST ${u.pathname} HTTP/${httpVersion}\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
      );
    });
    socket.on('data', (d: string) => (raw += d));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET') reset = true;
      else reject(e);
    });
    socket.on('close', () => resolve({ raw, reset }));
  });
}

/** The items of an NDJSON body; the server's closing error line (if any) is not an item, see streamError(). */
export function ndjsonItems(body: string): unknown[] {
  return body
    .split('\n')
    .filter((l) => l.trim() !== '' && parseStreamErrorLine(l) === undefined)
    .map((l) => JSON.parse(l) as unknown);
}

/** The error line a broken-off response ended with, if it arrived. */
export function streamError(body: string): StreamErrorLine | undefined {
  for (const l of body.split('\n')) {
    const e = parseStreamErrorLine(l);
    if (e) return e;
  }
  return undefined;
}

export const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A separate worker on the harness's queue (for an api-only harness); the caller closes it. */
export function workerFor(
  h: Harness,
  runner: ScriptedRunner,
  opts: Partial<CommandWorkerOptions> & { key?: string } = {},
): CommandWorker {
  const { key = HARNESS_JOB_KEY, ...rest } = opts;
  return new CommandWorker({
    redisUrl: h.env.REDIS_URL ?? redisUrl(),
    runner: runner.runner,
    crypto: JobCrypto.fromKey(key),
    logger: silentLogger,
    concurrency: 1,
    quickConcurrency: 1,
    queueName: h.env.QUEUE_NAME,
    ...rest,
  });
}
