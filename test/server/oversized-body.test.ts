/**
 * An oversized body gets its 413 JSON answer on every client, at the default limit (10 MB): Node
 * fetch (what the incumbent connectors use), our proxy client, a raw socket that uploads slowly,
 * a chunked upload without Content-Length, and `Expect: 100-continue` (413 before any upload).
 */
import net from 'node:net';
import { proxyItems } from '../../src/proxy-client';
import { commandBody, PASSWORD, startHarness, type Harness } from './harness';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(120_000));

const ELEVEN_MB = 11 * 1024 * 1024;

function oversizedBody(): string {
  const body = commandBody({ items: 1 });
  return JSON.stringify({ ...body, input: { blob: 'x'.repeat(ELEVEN_MB) } });
}

/** Sends raw bytes and returns everything the server answered until it closed the connection. */
function rawExchange(port: number, send: (socket: net.Socket) => Promise<void>): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', (e) =>
      reject(new Error(`socket error after answer ${JSON.stringify(answer.slice(0, 200))}: ${e.message}`)),
    );
    socket.on('close', () => resolve(answer));
    socket.on('connect', () => void send(socket).catch(reject));
  });
}

const write = (socket: net.Socket, data: string | Buffer): Promise<void> =>
  new Promise((resolve, reject) => socket.write(data, (e) => (e ? reject(e) : resolve())));

describe('oversized request bodies (default BODY_LIMIT_BYTES)', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await startHarness('embedded');
    port = Number(new URL(h.base).port);
  });
  afterAll(async () => {
    await h.close();
  });

  it('Node fetch gets the 413 JSON answer every time (10 of 10), and nothing runs', async () => {
    const body = oversizedBody();
    const before = h.runner.executions.length;
    for (let i = 0; i < 10; i += 1) {
      const res = await fetch(`${h.base}/proxy`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: expect.stringContaining('BODY_LIMIT_BYTES'), code: 'BODY_TOO_LARGE' });
    }
    expect(h.runner.executions.length).toBe(before);
  });

  it('our proxy client reports BODY_TOO_LARGE with the remedy, not a connection failure', async () => {
    const run = async (): Promise<void> => {
      for await (const _ of proxyItems({
        url: `${h.base}/proxy`,
        password: PASSWORD,
        type: 'std:account:list',
        input: { blob: 'x'.repeat(ELEVEN_MB) },
        config: commandBody().config as Record<string, unknown>,
      }));
    };
    for (let i = 0; i < 3; i += 1)
      await expect(run()).rejects.toMatchObject({
        code: 'BODY_TOO_LARGE',
        message: expect.stringMatching(/HTTP 413.*BODY_LIMIT_BYTES/),
      });
  });

  it('a raw socket that uploads slowly in 1 MB pieces reads the 413', async () => {
    const body = Buffer.from(oversizedBody());
    const answer = await rawExchange(port, async (socket) => {
      await write(
        socket,
        `POST /proxy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      for (let at = 0; at < body.length; at += 1024 * 1024) {
        await write(socket, body.subarray(at, at + 1024 * 1024));
        await new Promise((r) => setTimeout(r, 10));
      }
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"BODY_TOO_LARGE"');
  });

  it('a chunked upload without Content-Length that grows past the limit reads the 413', async () => {
    const answer = await rawExchange(port, async (socket) => {
      await write(
        socket,
        'POST /proxy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      const piece = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < 11; i += 1)
        await write(
          socket,
          Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]),
        );
      await write(socket, '0\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"BODY_TOO_LARGE"');
  });

  it('Expect: 100-continue with a declared length over the limit gets the 413 instead of 100 Continue', async () => {
    const answer = await rawExchange(port, async (socket) => {
      await write(
        socket,
        `POST /proxy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${ELEVEN_MB}\r\nExpect: 100-continue\r\n\r\n`,
      );
    });
    expect(answer).not.toContain('100 Continue');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"code":"BODY_TOO_LARGE"');
  });

  it('Expect: 100-continue within the limit still continues and runs', async () => {
    const body = JSON.stringify(commandBody({ items: 1 }));
    const answer = await rawExchange(port, async (socket) => {
      await write(
        socket,
        `POST /proxy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      );
      await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      await write(socket, body);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(answer).toMatch(/HTTP\/1\.1 200 /);
  });
});
