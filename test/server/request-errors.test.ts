/**
 * What a request that is itself wrong is answered, through the real server (embedded, the
 * production runner against the simulator): the status and code docs/errors.md promises, and a
 * message that names the wrong value. Node `fetch` and raw sockets, as clients send them.
 */
import net from 'node:net';
import { createLogger } from '../../src/observability/logger';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { loadEnv } from '../../src/server/env';
import { startServer, type RunningServer } from '../../src/server/server';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { tenantConnection } from '../support/tenant-config';

const PASSWORD = 'request-errors-password-0123456789';

let sim: RunningSimulator;
let server: RunningServer;
let config: Record<string, unknown>;

beforeAll(async () => {
  sim = await startSimulator({ seed: 3, tenant: { identities: 5, accountsPerSource: 3 }, rateLimit: false });
  server = await startServer(
    loadEnv({ PORT: '0', HOST: '127.0.0.1', PROXY_PASSWORD: PASSWORD, METRICS_ENABLED: 'false' }),
    {
      runner: createProductionRunner({}),
      logger: createLogger({ level: 'error', destination: { write: () => undefined } }),
    },
  );
  config = { proxyEnabled: true, proxyPassword: PASSWORD, ...tenantConnection(sim) };
});

afterAll(async () => {
  await server?.close();
  await sim?.close();
});

async function send(
  type: string,
  input: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<{ status: number; body: { error: string; code: string } }> {
  const res = await fetch(`${server.url}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type, input, config: { ...config, ...extra } }),
  });
  return { status: res.status, body: (await res.json()) as { error: string; code: string } };
}

describe('a request whose configuration or input is wrong', () => {
  it('invalid settings: 400 CONFIG_INVALID naming the field and its value', async () => {
    const { status, body } = await send('std:test-connection', {}, { requestsPerSecond: -5 });
    expect(status).toBe(400);
    expect(body.code).toBe('CONFIG_INVALID');
    expect(body.error).toMatch(/requestsPerSecond = -5: allowed/);
  });

  it('invalid matching settings: 400 MATCHING_INVALID with the precise setting and value, not the whole section', async () => {
    const matching = {
      attributes: [
        { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
        { attribute: 'lastName', algorithm: 'nonsense', threshold: 80 },
      ],
      reviewTopK: 5,
    };
    const { status, body } = await send('std:test-connection', {}, { matching });
    expect(status).toBe(400);
    expect(body.code).toBe('MATCHING_INVALID');
    expect(body.error).toMatch(/matching\.attributes\[1\]\.algorithm = "nonsense": allowed one of /);
    expect(body.error).not.toContain('jaro-winkler",');
  });

  it('invalid matching and other settings together: every problem listed under CONFIG_INVALID, each with its own value', async () => {
    const matching = { attributes: [{ attribute: 'email', algorithm: 'jaro-winkler', threshold: 900 }] };
    const { status, body } = await send('std:test-connection', {}, { matching, requestsPerSecond: -5 });
    expect(status).toBe(400);
    expect(body.code).toBe('CONFIG_INVALID');
    expect(body.error).toMatch(/matching\.attributes\[0\]\.threshold = 900: allowed a number from 0 to 100/);
    expect(body.error).toMatch(/requestsPerSecond = -5/);
  });

  it.each([
    ['an object', { identity: { id: 'x' } }],
    ['a number', { identity: 42 }],
    ['an array', { identity: ['a'] }],
  ])('input.identity that is %s: 400 INPUT_INVALID', async (_what, input) => {
    const { status, body } = await send('std:account:read', input);
    expect(status).toBe(400);
    expect(body.code).toBe('INPUT_INVALID');
    expect(body.error).toMatch(/identity/);
  });
});

/** One raw request line and headers; what the server answers, or '' when it only closed. */
function raw(request: string): Promise<string> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(request));
    socket.on('data', (d: string) => {
      text += d;
      // One answer is enough (a keep-alive connection stays open).
      if (/\r\n\r\n/.test(text) && /"code"/.test(text)) socket.end();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? resolve(text) : reject(e)));
    socket.on('close', () => resolve(text));
  });
}

describe('methods other than POST on the proxy endpoint', () => {
  it.each(['OPTIONS', 'TRACE'])('%s: 405 METHOD_NOT_ALLOWED with Allow: POST', async (method) => {
    const answer = await raw(`${method} / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 405 /);
    expect(answer).toMatch(/\r\nallow: POST\r\n/i);
    expect(answer).toContain('"code":"METHOD_NOT_ALLOWED"');
  });

  it('CONNECT is answered (405, Allow: POST), not left without a word', async () => {
    const answer = await raw(`CONNECT ${new URL(server.url).host} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 405 /);
    expect(answer).toMatch(/\r\nallow: POST\r\n/i);
    expect(answer).toContain('"code":"METHOD_NOT_ALLOWED"');
  });
});
