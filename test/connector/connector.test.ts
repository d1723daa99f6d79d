import { Writable } from 'node:stream';
import {
  _withConfig,
  ConnectorError,
  ConnectorErrorType,
  type Connector,
  type Context,
  type RawResponse,
} from '@sailpoint/connector-sdk';
import type { CommandContext, CommandOutput, CommandRunner } from '../../src/core/command-runner';
import { COMMAND_TYPES, type CommandType } from '../../src/core/command-types';
import { FusionError } from '../../src/core/errors';
import { failedStream } from '../../src/core/failed-stream';
import { createFusionConnector } from '../../src/connector';
import { startFakeProxyServer, writeChunk, type TestServer } from '../support/fake-proxy-server';
import { captureLogger } from '../proxy-client/capture-logger';

const PASSWORD = 'Connector-Proxy-Secret-9931';
const CLIENT_SECRET = 'connector-client-secret-4410';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function collector(opts: { highWaterMark?: number; onWrite?: (r: RawResponse) => void; slow?: boolean } = {}): {
  writable: Writable;
  out: RawResponse[];
} {
  const out: RawResponse[] = [];
  const writable = new Writable({
    objectMode: true,
    highWaterMark: opts.highWaterMark ?? 16,
    write(chunk: RawResponse, _enc, cb) {
      out.push(chunk);
      opts.onWrite?.(chunk);
      if (opts.slow) setTimeout(cb, 1);
      else cb();
    },
  });
  return { writable, out };
}

async function exec(
  c: Connector,
  type: string,
  config: Record<string, unknown>,
  input: unknown,
  writable: Writable,
): Promise<void> {
  await _withConfig(config, () =>
    c._exec(type, { commandType: type, version: 1 } as unknown as Context, input, writable),
  );
}

function baseConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { baseurl: 'https://tenant.api.example.com', clientId: 'cid', clientSecret: CLIENT_SECRET, ...extra };
}

/** A runner that records its calls and yields the given items. */
function recordingRunner(items: CommandOutput[]): {
  runner: () => CommandRunner;
  calls: Array<{
    type: CommandType;
    input: Record<string, unknown>;
    config: Record<string, unknown>;
    ctx: CommandContext;
  }>;
} {
  const calls: Array<{
    type: CommandType;
    input: Record<string, unknown>;
    config: Record<string, unknown>;
    ctx: CommandContext;
  }> = [];
  const runner: CommandRunner = (type, input, config, ctx) => {
    calls.push({ type, input, config, ctx });
    return (async function* gen() {
      for (const i of items) yield i;
    })();
  };
  return { runner: () => runner, calls };
}

const outputs = (out: RawResponse[]): unknown[] => out.filter((r) => r.type === 'output').map((r) => r.data);

describe('connector: registration', () => {
  it('registers a handler for each of the nine commands', () => {
    const c = createFusionConnector({ logger: captureLogger() });
    for (const type of COMMAND_TYPES) expect(c.handlers.has(type)).toBe(true);
  });

  it('std:spec:read serves connector-spec.json with the nine commands and the proxy and credential fields', async () => {
    const c = createFusionConnector({ logger: captureLogger() });
    const { writable, out } = collector();
    await exec(c, 'std:spec:read', {}, {}, writable);
    const spec = (outputs(out)[0] as { specification: { commands: string[]; sourceConfig: unknown } }).specification;
    expect([...spec.commands].sort()).toEqual([...COMMAND_TYPES].sort());
    const keys = JSON.stringify(spec.sourceConfig)
      .match(/"key":"[^"]+"/g)
      ?.map((k) => k.slice(7, -1));
    expect(keys).toEqual(
      expect.arrayContaining(['proxyEnabled', 'proxyUrl', 'proxyPassword', 'baseurl', 'clientId', 'clientSecret']),
    );
  });
});

describe('connector: proxy-client role', () => {
  it('forwards through the SDK _exec path and sends each item as it arrives', async () => {
    let releaseRest: () => void = () => undefined;
    const firstDelivered = new Promise<void>((r) => (releaseRest = r));
    let serverFinished = false;
    const s = await startFakeProxyServer(
      async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        await writeChunk(res, '{"key":{"simple":{"id":"u1"}},"attributes":{"id":"u1"}}\n');
        await firstDelivered; // the platform's writable must have item 1 before the server goes on
        await writeChunk(res, '\n{"key":{"simple":{"id":"u2"}},"attributes":{"id":"u2"},"disabled":true}\n');
        serverFinished = true;
        res.end();
      },
      { path: '/fusion' },
    );
    servers.push(s);
    const runner = recordingRunner([]);
    const c = createFusionConnector({ logger: captureLogger(), env: {}, runner: runner.runner });
    const { writable, out } = collector({
      onWrite: (r) => {
        if (r.type === 'output' && (r.data as unknown as { attributes: { id: string } }).attributes.id === 'u1') {
          expect(serverFinished).toBe(false);
          releaseRest();
        }
      },
    });
    const config = baseConfig({ proxyEnabled: true, proxyUrl: s.url, proxyPassword: PASSWORD, sources: ['HR'] });
    await exec(c, 'std:account:list', config, { stateful: false }, writable);

    expect(outputs(out)).toEqual([
      { key: { simple: { id: 'u1' } }, attributes: { id: 'u1' } },
      { key: { simple: { id: 'u2' } }, attributes: { id: 'u2' }, disabled: true },
    ]);
    // The heartbeat between the items became one keepAlive for the platform.
    expect(out.filter((r) => r.type === 'keepAlive')).toHaveLength(1);
    expect(runner.calls).toHaveLength(0);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.body).toEqual({
      type: 'std:account:list',
      input: { stateful: false },
      config: { ...config, proxyEnabled: false },
    });
  });

  it("respects the platform writable's backpressure: items arrive complete and in order through a slow, tiny buffer", async () => {
    const n = 300;
    const s = await startFakeProxyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.from({ length: n }, (_, i) => ({ i }))));
    });
    servers.push(s);
    const c = createFusionConnector({ logger: captureLogger(), env: {} });
    let maxBuffered = 0;
    const col = collector({
      highWaterMark: 2,
      slow: true,
      onWrite: () => (maxBuffered = Math.max(maxBuffered, col.writable.writableLength)),
    });
    await exec(
      c,
      'std:entitlement:list',
      baseConfig({ proxyEnabled: true, proxyUrl: s.url, proxyPassword: PASSWORD }),
      {},
      col.writable,
    );
    expect(outputs(col.out)).toEqual(Array.from({ length: n }, (_, i) => ({ i })));
    // Without waiting for 'drain', all 300 items would queue in the writable at once.
    expect(maxBuffered).toBeLessThanOrEqual(2);
  });

  it('turns a proxy failure into a ConnectorError whose message names the URL and hides the secrets', async () => {
    const s = await startFakeProxyServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'proxy password does not match' }));
    });
    servers.push(s);
    const logger = captureLogger();
    const c = createFusionConnector({ logger, env: {} });
    const { writable, out } = collector();
    const p = exec(
      c,
      'std:test-connection',
      baseConfig({ proxyEnabled: true, proxyUrl: s.url, proxyPassword: PASSWORD }),
      {},
      writable,
    );
    await expect(p).rejects.toBeInstanceOf(ConnectorError);
    const err = (await p.catch((e: unknown) => e)) as ConnectorError;
    expect(err.type).toBe(ConnectorErrorType.Generic);
    expect(err.message).toMatch(/rejected the proxy password \(HTTP 401\): proxy password does not match/);
    expect(err.message).toContain(s.url);
    expect(outputs(out)).toEqual([]);
    for (const text of [err.message, ...logger.lines.map((l) => l.text)]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(CLIENT_SECRET);
    }
    expect(logger.lines.some((l) => l.level === 'error' && /PROXY_UNAUTHORIZED/.test(l.text))).toBe(true);
  });

  it('the exported `connector` (production wiring, SDK readConfig) forwards in proxy-client role', async () => {
    const s = await startFakeProxyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"status":"ok"}\n');
    });
    servers.push(s);
    const saved = { LOG_LEVEL: process.env.LOG_LEVEL, PROXY_PASSWORD: process.env.PROXY_PASSWORD };
    // The platform's default: LOG_LEVEL unset (info).
    delete process.env.LOG_LEVEL;
    delete process.env.PROXY_PASSWORD;
    try {
      const mod = await import('../../src/connector');
      const { writable, out } = collector();
      await exec(
        mod.connector,
        'std:test-connection',
        baseConfig({ proxyEnabled: true, proxyUrl: s.url, proxyPassword: PASSWORD }),
        {},
        writable,
      );
      expect(outputs(out)).toEqual([{ status: 'ok' }]);
      expect(s.requests).toHaveLength(1);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('connector: direct and proxy-server roles run the core in this process', () => {
  it('direct: proxy disabled -> the runner gets the config without proxyPassword and proxyEnabled false', async () => {
    const { runner, calls } = recordingRunner([{ status: 'ok' }]);
    const c = createFusionConnector({ logger: captureLogger(), env: {}, runner });
    const { writable, out } = collector();
    await exec(
      c,
      'std:test-connection',
      baseConfig({ proxyEnabled: false, proxyUrl: 'http://127.0.0.1:1/', proxyPassword: PASSWORD }),
      undefined,
      writable,
    );
    expect(outputs(out)).toEqual([{ status: 'ok' }]);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.type).toBe('std:test-connection');
    expect(calls[0]!.input).toEqual({});
    expect(calls[0]!.config).toEqual(baseConfig({ proxyEnabled: false, proxyUrl: 'http://127.0.0.1:1/' }));
    expect(calls[0]!.config).not.toHaveProperty('proxyPassword');
  });

  it('direct: the form shapes of connector-spec.json (card lists) reach the core in its own shape', async () => {
    const { runner, calls } = recordingRunner([{ status: 'ok' }]);
    const c = createFusionConnector({ logger: captureLogger(), env: {}, runner });
    const { writable } = collector();
    const form = baseConfig({
      sources: ['HR'],
      sourceOptions: [{ source: 'HR', forceAggregation: true, accountFilter: '' }],
      matchingAttributes: [{ attribute: 'email', algorithm: 'exact', threshold: 90, mandatory: false }],
      matchingReviewTopK: 4,
    });
    await exec(c, 'std:test-connection', form, undefined, writable);
    expect(calls[0]!.config.sourceOptions).toEqual({ HR: { forceAggregation: true, accountFilter: '' } });
    expect(calls[0]!.config.matching).toEqual({
      attributes: [{ attribute: 'email', algorithm: 'exact', threshold: 90, mandatory: false }],
      reviewTopK: 4,
    });
    expect(calls[0]!.config).not.toHaveProperty('matchingAttributes');
  });

  it('direct: proxy enabled without a URL runs directly and warns', async () => {
    const { runner, calls } = recordingRunner([]);
    const logger = captureLogger();
    const c = createFusionConnector({ logger, env: {}, runner });
    await exec(c, 'std:account:list', baseConfig({ proxyEnabled: true }), {}, collector().writable);
    expect(calls).toHaveLength(1);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.text)).toEqual([
      expect.stringMatching(/no Proxy URL is set/),
    ]);
  });

  it('direct: progress from the core becomes throttled keepAlive responses', async () => {
    const runner: CommandRunner = (_t, _i, _c, ctx) =>
      (async function* gen() {
        ctx.progress();
        ctx.progress();
        ctx.progress();
        yield { done: true };
      })();
    const c = createFusionConnector({ logger: captureLogger(), env: {}, runner: () => runner });
    const { writable, out } = collector();
    await exec(c, 'std:account:list', baseConfig(), {}, writable);
    expect(out.map((r) => r.type)).toEqual(['keepAlive', 'output']);
  });

  it('direct: a core FusionError becomes a ConnectorError; ACCOUNT_NOT_FOUND keeps the notFound type', async () => {
    const failing =
      (code: 'ACCOUNT_NOT_FOUND' | 'TEMPLATE_ERROR'): (() => CommandRunner) =>
      () =>
      () =>
        failedStream<CommandOutput>(new FusionError(code, `failure ${code}`));
    const notFound = createFusionConnector({ logger: captureLogger(), env: {}, runner: failing('ACCOUNT_NOT_FOUND') });
    await expect(
      exec(notFound, 'std:account:read', baseConfig(), { identity: 'x' }, collector().writable),
    ).rejects.toMatchObject({
      type: ConnectorErrorType.NotFound,
      message: 'failure ACCOUNT_NOT_FOUND',
    });
    const generic = createFusionConnector({ logger: captureLogger(), env: {}, runner: failing('TEMPLATE_ERROR') });
    await expect(exec(generic, 'std:account:list', baseConfig(), {}, collector().writable)).rejects.toMatchObject({
      type: ConnectorErrorType.Generic,
      message: 'failure TEMPLATE_ERROR',
    });
  });

  it('direct: a core error quoting the client secret reaches neither the platform nor the connector log in clear', async () => {
    const runner = (): CommandRunner => () =>
      failedStream<CommandOutput>(
        new FusionError('ACCOUNT_NOT_FOUND', `Connector account "u-${CLIENT_SECRET}" does not exist`),
      );
    const logger = captureLogger();
    const c = createFusionConnector({ logger, env: {}, runner });
    const err = await exec(c, 'std:account:read', baseConfig(), { identity: 'x' }, collector().writable).catch(
      (e: unknown) => e as Error,
    );
    expect((err as Error).message).toBe('Connector account "u-[redacted]" does not exist');
    const logged = JSON.stringify(logger.lines);
    expect(logged).toContain('u-[redacted]');
    expect(logged).not.toContain(CLIENT_SECRET);
  });

  it('proxy-server: PROXY_PASSWORD set and proxyEnabled true -> runs here, never forwards, with the password checked', async () => {
    const s = await startFakeProxyServer((_req, res) => void res.end('[]'));
    servers.push(s);
    const { runner, calls } = recordingRunner([{ id: 'a' }]);
    const c = createFusionConnector({ logger: captureLogger(), env: { PROXY_PASSWORD: PASSWORD }, runner });
    const config = baseConfig({ proxyEnabled: true, proxyUrl: s.url, proxyPassword: PASSWORD });
    const { writable, out } = collector();
    await exec(c, 'std:account:list', config, {}, writable);
    expect(outputs(out)).toEqual([{ id: 'a' }]);
    expect(s.requests).toHaveLength(0);
    expect(calls[0]!.config).toEqual(baseConfig({ proxyEnabled: false, proxyUrl: s.url }));
  });

  it('proxy-server: a wrong or missing password is refused and nothing runs', async () => {
    const { runner, calls } = recordingRunner([{ id: 'a' }]);
    const c = createFusionConnector({ logger: captureLogger(), env: { PROXY_PASSWORD: PASSWORD }, runner });
    for (const given of [PASSWORD.toLowerCase(), undefined, '']) {
      const p = exec(
        c,
        'std:account:list',
        baseConfig({ proxyEnabled: true, proxyPassword: given }),
        {},
        collector().writable,
      );
      await expect(p).rejects.toBeInstanceOf(ConnectorError);
      await expect(p).rejects.toThrow(/does not match PROXY_PASSWORD/);
    }
    expect(calls).toHaveLength(0);
  });

  it('the string "true" for proxyEnabled selects the proxy-client role', async () => {
    const s = await startFakeProxyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"id":"x"}]');
    });
    servers.push(s);
    const { runner, calls } = recordingRunner([]);
    const c = createFusionConnector({ logger: captureLogger(), env: {}, runner });
    const { writable, out } = collector();
    await exec(
      c,
      'std:account:read',
      baseConfig({ proxyEnabled: 'true', proxyUrl: s.url, proxyPassword: PASSWORD }),
      { identity: 'x' },
      writable,
    );
    expect(outputs(out)).toEqual([{ id: 'x' }]);
    expect(calls).toHaveLength(0);
    expect((s.requests[0]!.body as { config: { proxyEnabled: unknown } }).config.proxyEnabled).toBe(false);
  });
});
