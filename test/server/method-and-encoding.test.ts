import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { commandBody, startHarness, type Harness } from './harness';

describe.each(['embedded', 'queue'] as const)('proxy endpoint, %s mode: methods and encodings', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h.close();
  });

  it.each(['GET', 'PUT', 'PATCH', 'DELETE'])(
    '%s on the endpoint answers 405 with Allow: POST and a JSON error (Node fetch)',
    async (method) => {
      const res = await fetch(`${h.base}/proxy`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toEqual({
        error: expect.stringContaining(`${method} is not allowed`),
        code: 'METHOD_NOT_ALLOWED',
      });
    },
  );

  it('a gzip-encoded body answers 415 with the reason, and nothing runs', async () => {
    const before = h.runner.executions.length;
    const res = await fetch(`${h.base}/proxy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(commandBody({ items: 1 }))),
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({
      error: expect.stringContaining('Content-Encoding "gzip"'),
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
    expect(h.runner.executions.length).toBe(before);
  });

  it('a plain body with Content-Encoding: identity still runs', async () => {
    const res = await fetch(`${h.base}/proxy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      body: JSON.stringify(commandBody({ items: 2 })),
    });
    expect(res.status).toBe(200);
    expect((await res.text()).trim().split('\n').filter(Boolean)).toHaveLength(2);
  });

  /** One request written byte for byte; resolves with the raw answer once the server closes. */
  function raw(request: string): Promise<string> {
    const u = new URL(h.base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(u.port), u.hostname, () => socket.write(request));
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (answer += d));
      socket.on('error', reject);
      socket.on('close', () => resolve(answer));
    });
  }

  it('an HTTP/1.1 request without a Host header gets a JSON 400 (Node alone sends an empty one), and nothing runs', async () => {
    const before = h.runner.executions.length;
    const body = JSON.stringify(commandBody({ items: 1 }));
    const answer = await raw(
      `POST /proxy HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'an HTTP/1.1 request needs a Host header',
      code: 'INPUT_INVALID',
    });
    expect(h.runner.executions.length).toBe(before);
  });

  it('an HTTP/1.0 request needs no Host header', async () => {
    const before = h.runner.executions.length;
    const body = JSON.stringify(commandBody({ items: 1 }));
    const answer = await raw(
      `POST /proxy HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(h.runner.executions.length).toBe(before + 1);
  });
});
