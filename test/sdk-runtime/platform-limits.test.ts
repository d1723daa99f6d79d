/**
 * The platform's limits, met by the connector: a keepAlive while it waits on a silent proxy or a
 * long command, an item above the platform's 256 KiB per-send cap refused with the account's
 * name, and 100,000 accounts through proxy-client mode with the connector's heap bounded.
 */
import { Writable } from 'node:stream';
import {
  _withConfig,
  ConnectorError,
  ConnectorErrorType,
  type Context,
  type RawResponse,
} from '@sailpoint/connector-sdk';
import type { CommandRunner } from '../../src/core/command-runner';
import { createFusionConnector, DEFAULT_KEEP_ALIVE_INTERVAL_MS } from '../../src/connector';
import { MAX_SEND_BYTES } from '../../src/connector/response-sink';
import { startFakeProxyServer, writeChunk, type TestServer } from '../support/fake-proxy-server';
import { captureLogger } from '../proxy-client/capture-logger';
import { buildForSpcx, execInChild, packAndExtract } from './connector-build';
import { spcxInvoke, startSpcx } from './spcx';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(180_000));

const PASSWORD = 'platform-limits-password-7781';
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const proxyConfig = (url: string): Record<string, unknown> => ({
  baseurl: 'https://tenant.api.example.com',
  clientId: 'cid',
  clientSecret: 'sec',
  proxyEnabled: true,
  proxyUrl: url,
  proxyPassword: PASSWORD,
});

function collector(onWrite?: (r: RawResponse) => void): { writable: Writable; out: RawResponse[] } {
  const out: RawResponse[] = [];
  const writable = new Writable({
    objectMode: true,
    write(chunk: RawResponse, _enc, cb) {
      out.push(chunk);
      onWrite?.(chunk);
      cb();
    },
  });
  return { writable, out };
}

async function exec(
  c: ReturnType<typeof createFusionConnector>,
  type: string,
  config: Record<string, unknown>,
  input: unknown,
  writable: Writable,
): Promise<void> {
  await _withConfig(config, () =>
    c._exec(type, { commandType: type, version: 1 } as unknown as Context, input, writable),
  );
}

describe('keepAlive', () => {
  it("the default interval stays well inside the platform's 2.5-minute limit", () => {
    expect(DEFAULT_KEEP_ALIVE_INTERVAL_MS).toBeLessThanOrEqual(60_000);
  });

  it('is sent while the connector waits on a proxy that sends nothing at all (no heartbeat, no item)', async () => {
    let sawKeepAlive: () => void = () => undefined;
    const keepAliveSeen = new Promise<void>((r) => (sawKeepAlive = r));
    const s = await startFakeProxyServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.flushHeaders();
      await keepAliveSeen; // silent until the platform side has a keepAlive
      res.end('{"status":"ok"}\n');
    });
    servers.push(s);
    const c = createFusionConnector({ logger: captureLogger(), env: {}, keepAliveIntervalMs: 25 });
    const { writable, out } = collector((r) => r.type === 'keepAlive' && sawKeepAlive());
    await exec(c, 'std:test-connection', proxyConfig(s.url), {}, writable);
    expect(out.map((r) => r.type)).toContain('keepAlive');
    expect(out.filter((r) => r.type === 'output').map((r) => r.data)).toEqual([{ status: 'ok' }]);
  });

  it('is sent while a long command in direct mode yields nothing', async () => {
    let sawKeepAlive: () => void = () => undefined;
    const keepAliveSeen = new Promise<void>((r) => (sawKeepAlive = r));
    const runner: CommandRunner = () =>
      (async function* slow() {
        await keepAliveSeen;
        yield { status: 'ok' };
      })();
    const c = createFusionConnector({
      logger: captureLogger(),
      env: {},
      runner: () => runner,
      keepAliveIntervalMs: 25,
    });
    const { writable, out } = collector((r) => r.type === 'keepAlive' && sawKeepAlive());
    await exec(
      c,
      'std:test-connection',
      { baseurl: 'https://x.example.com', clientId: 'a', clientSecret: 'b' },
      {},
      writable,
    );
    expect(out.map((r) => r.type)).toEqual(expect.arrayContaining(['keepAlive', 'output']));
  });

  it('at default settings, through the SDK dev server: a proxy heartbeat reaches the platform as keepAlive while the command waits', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    const s = await startFakeProxyServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '\n'); // the proxy server's heartbeat
      await released;
      res.end('{"status":"ok"}\n');
    });
    servers.push(s);
    const spcx = await startSpcx(await buildForSpcx(), undefined);
    try {
      const r = await spcxInvoke(
        spcx,
        'std:test-connection',
        {},
        proxyConfig(s.url),
        (line) => line.type === 'keepAlive' && release(),
      );
      expect(r.error).toBeUndefined();
      expect(r.keepAlives).toBeGreaterThanOrEqual(1);
      expect(r.outputs).toEqual([{ status: 'ok' }]);
    } finally {
      await spcx.close();
    }
  });
});

describe('the 256 KiB per-send cap', () => {
  it('refuses an item above the cap with an error naming the account, after sending the items before it', async () => {
    const big = {
      identity: 'u-big',
      attributes: { name: 'Ada Big', groups: Array.from({ length: 30_000 }, (_, i) => `group-${i}`) },
    };
    const small = { identity: 'u-small', attributes: { name: 'Small' } };
    expect(JSON.stringify(big).length).toBeGreaterThan(MAX_SEND_BYTES);
    const runner: CommandRunner = () =>
      (async function* items() {
        yield small;
        yield big;
        yield small;
      })();
    const c = createFusionConnector({ logger: captureLogger(), env: {}, runner: () => runner });
    const { writable, out } = collector();
    const p = exec(
      c,
      'std:account:list',
      { baseurl: 'https://x.example.com', clientId: 'a', clientSecret: 'b' },
      {},
      writable,
    );
    await expect(p).rejects.toBeInstanceOf(ConnectorError);
    await expect(p).rejects.toMatchObject({
      type: ConnectorErrorType.Generic,
      message: expect.stringMatching(
        /account u-big \/ Ada Big is \d+ bytes, above the platform's limit of 262144 bytes/,
      ),
    });
    expect(
      out.filter((r) => r.type === 'output').map((r) => (r.data as unknown as { identity: string }).identity),
    ).toEqual(['u-small']);
  });

  it('lets an item just under the cap through', async () => {
    const filler = 'x'.repeat(MAX_SEND_BYTES - 200);
    const runner: CommandRunner = () =>
      (async function* items() {
        yield { identity: 'u1', attributes: { blob: filler } };
      })();
    const c = createFusionConnector({ logger: captureLogger(), env: {}, runner: () => runner });
    const { writable, out } = collector();
    await exec(
      c,
      'std:account:list',
      { baseurl: 'https://x.example.com', clientId: 'a', clientSecret: 'b' },
      {},
      writable,
    );
    expect(out.filter((r) => r.type === 'output')).toHaveLength(1);
  });
});

describe('100,000 accounts through proxy-client mode', () => {
  it("keep the connector's heap bounded (the zip's index.js under _exec, heap after a forced GC every 10,000 items)", async () => {
    const total = 100_000;
    const pad = 'p'.repeat(900); // about 1 KB per item: 100 MB if the connector held them
    const s = await startFakeProxyServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      for (let i = 0; i < total; i += 1) {
        const line = `{"identity":"u${i}","attributes":{"name":"User ${i}","pad":"${pad}"}}\n`;
        if (!res.write(line)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
    });
    servers.push(s);
    const { dir } = packAndExtract();
    const { results } = await execInChild(
      `${dir}/index.js`,
      [{ type: 'std:account:list', input: {}, config: proxyConfig(s.url) }],
      {
        cwd: dir,
        nodeArgs: ['--expose-gc'],
        heapEvery: 10_000,
        slowWritable: true,
      },
    );
    const r = results[0]!;
    expect(r.error).toBeUndefined();
    expect(r.count).toBe(total);
    expect(r.heap).toHaveLength(10);
    const growthMiB = (Math.max(...r.heap) - r.heap[0]!) / 1024 / 1024;
    console.log(
      `heap after GC per 10k items (MiB): ${r.heap.map((h) => (h / 1024 / 1024).toFixed(1)).join(' ')}; growth ${growthMiB.toFixed(1)} MiB`,
    );
    expect(growthMiB).toBeLessThan(24);
  });
});
