import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real HTTP(S) server for proxy-client tests: each test scripts the answer. It is NOT the
 * product's proxy server (src/server); it lets tests produce every shape of good and bad answer.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (undefined when the body was not JSON). */
  body: unknown;
}

export type FakeHandler = (req: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface TestServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

function track(server: net.Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // TLS servers report the raw TCP socket through 'connection' as well.
  return sockets;
}

function closer(server: net.Server, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

export async function startFakeProxyServer(
  handler: FakeHandler,
  opts: { tls?: { key: string; cert: string }; path?: string } = {},
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const onRequest = (raw: IncomingMessage, res: ServerResponse): void => {
    const parts: Buffer[] = [];
    raw.on('data', (c: Buffer) => parts.push(c));
    raw.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const rec: RecordedRequest = { method: raw.method ?? '', path: raw.url ?? '', headers: raw.headers, body };
      requests.push(rec);
      Promise.resolve(handler(rec, res, raw)).catch((e: unknown) => {
        // A failing scripted handler must be visible in the test, not hang it.
        res.destroy(e instanceof Error ? e : new Error(String(e)));
      });
    });
  };
  const server = opts.tls
    ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, onRequest)
    : http.createServer(onRequest);
  const sockets = track(server);
  const port = await listen(server);
  const scheme = opts.tls ? 'https' : 'http';
  return { url: `${scheme}://127.0.0.1:${port}${opts.path ?? '/'}`, port, requests, close: closer(server, sockets) };
}

/** A TCP server that accepts connections and never sends a byte (nor completes a TLS handshake). */
export async function startSilentServer(): Promise<TestServer> {
  const server = net.createServer(() => undefined);
  const sockets = track(server);
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/`, port, requests: [], close: closer(server, sockets) };
}

/** A URL whose port had a listener a moment ago and has none now: connecting is refused. */
export async function closedPortUrl(): Promise<string> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/`;
}

/** Writes and waits for the socket to take the data (server-side backpressure, so tests stay flat in memory). */
export function writeChunk(res: ServerResponse, data: string | Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (res.destroyed) {
      reject(new Error('response destroyed'));
      return;
    }
    const ok = res.write(data);
    if (ok) {
      resolve();
      return;
    }
    const onDrain = (): void => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      res.off('drain', onDrain);
      reject(new Error('response closed'));
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI at test time. */
export function generateSelfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fusion-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
