/**
 * The operator's rehearsal: the simulator CLI, started with --write-config and --connector-url,
 * plays the platform against a real proxy server (embedded and queue mode, production runner, every
 * timing setting at its default); `fusion-proxy invoke` tests the connection with the written file,
 * and `fusion-proxy aggregate` asks the platform to aggregate the connector's source, whose task
 * reads std:account:list through the proxy URL and ingests it as the platform would.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { run as aggregate } from '../../src/cli/aggregate';
import { run as invoke } from '../../src/cli/invoke';
import { run as simulator } from '../../src/cli/simulator';
import { parseFusionConfig } from '../../src/core/config/fusion-config';
import { createLogger } from '../../src/observability/logger';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { loadEnv } from '../../src/server/env';
import { startServer, type RunningServer } from '../../src/server/server';
import { fetchToken } from '../simulator/client';
import { openRedis, redisUrl, uniquePrefix } from '../support/redis';

type Mode = 'embedded' | 'queue';
const PASSWORD = 'rehearsal-proxy-password-2290';

interface Ready {
  baseurl: string;
  clientSecret: string;
  fusionSourceId: string;
  spConnectorInstanceId: string;
  sources: string[];
  identities: number;
  configFile: string;
  connectorUrl: string;
}

function sink(): { stream: Writable; text: () => string } {
  const parts: string[] = [];
  return {
    stream: new Writable({
      write(chunk: Buffer, _enc, cb) {
        parts.push(chunk.toString('utf8'));
        cb();
      },
    }),
    text: () => parts.join(''),
  };
}

async function aggregateOnce(config: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await aggregate(['--config', config, '--poll-ms', '50'], {
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
  });
  return { code, out, err };
}

describe.each<Mode>(['embedded', 'queue'])('the simulator plays the platform over HTTP (%s mode)', (mode) => {
  let server: RunningServer;
  let redis: Redis | undefined;
  let dir: string;
  let ready: Ready;
  const stop = new AbortController();
  let simExit: Promise<number>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fusion-rehearsal-'));
    redis = mode === 'queue' ? openRedis() : undefined;
    const runner = createProductionRunner({ ...(redis ? { redis, keyPrefix: `${uniquePrefix('rehearsal')}:` } : {}) });
    const env = loadEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      PROXY_PASSWORD: PASSWORD,
      QUEUE_NAME: uniquePrefix('rehearsal-q'),
      METRICS_ENABLED: 'false',
      ...(mode === 'queue' ? { REDIS_URL: redisUrl(), JOB_ENCRYPTION_KEY: 'd'.repeat(64) } : {}),
    });
    server = await startServer(env, { runner, logger: createLogger({ destination: { write: () => undefined } }) });
    let line = '';
    let printed!: () => void;
    const isReady = new Promise<void>((r) => (printed = r));
    simExit = simulator(
      [
        '--seed',
        '21',
        '--identities',
        '60',
        '--accounts-per-source',
        '25',
        '--rps-limit',
        '0',
        '--write-config',
        join(dir, 'fusion.json'),
        '--connector-url',
        `${server.url}/`,
        '--proxy-password',
        PASSWORD,
      ],
      {
        signal: stop.signal,
        write: (t) => {
          line += t;
          printed();
        },
      },
    );
    await isReady;
    ready = JSON.parse(line) as Ready;
  });

  afterAll(async () => {
    stop.abort();
    await simExit;
    await server?.close();
    await redis?.quit();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the connector instance id and source names, and writes a complete, private configuration', () => {
    expect(ready.spConnectorInstanceId).toMatch(/^[0-9a-f]{32}$/);
    expect(ready.sources.length).toBeGreaterThan(0);
    expect(ready.connectorUrl).toBe(`${server.url}/`);
    const file = join(dir, 'fusion.json');
    expect(ready.configFile).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({
      baseurl: ready.baseurl,
      clientSecret: ready.clientSecret,
      spConnectorInstanceId: ready.spConnectorInstanceId,
      sources: ready.sources,
      proxyEnabled: true,
      proxyUrl: `${server.url}/`,
      proxyPassword: PASSWORD,
    });
    // The connector's own parser accepts it as it is.
    expect(parseFusionConfig(config).sources).toEqual(ready.sources);
  });

  it('invoke with the written file: test connection succeeds through the proxy', async () => {
    const out = sink();
    const err = sink();
    const code = await invoke(
      ['--url', `${server.url}/`, '--type', 'std:test-connection', '--config', join(dir, 'fusion.json')],
      { stdout: out.stream, stderr: err.stream, env: {} },
    );
    expect(err.text()).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(out.text())).toMatchObject({ status: 'success', configuredSources: ready.sources });
  });

  it('aggregate: the platform reads the connector through the proxy and ingests it; a second run changes nothing', async () => {
    const first = await aggregateOnce(join(dir, 'fusion.json'));
    expect(first.err).toContain(`(${ready.fusionSourceId})`);
    expect(first.code).toBe(0);
    const result = JSON.parse(first.out) as { state: string; messages: string[] };
    expect(result.state).toBe('SUCCESS');
    const m =
      /^(\d+) accounts received; (\d+) created, 0 updated, 0 unchanged, 0 removed; (\d+) identities created; (\d+) enabled$/.exec(
        result.messages[0] ?? '',
      );
    expect(m).not.toBeNull();
    const [, received, created, identities, enabled] = m!.map(Number);
    expect(received).toBeGreaterThan(0);
    expect(created).toBe(received);
    expect(identities).toBe(created);
    expect(enabled).toBe(created);

    const second = await aggregateOnce(join(dir, 'fusion.json'));
    expect(second.code).toBe(0);
    expect((JSON.parse(second.out) as { messages: string[] }).messages[0]).toBe(
      `${received} accounts received; 0 created, 0 updated, ${received} unchanged, 0 removed; 0 identities created; 0 enabled`,
    );
  });

  it('a wrong spConnectorInstanceId: aggregate says where to find the right one', async () => {
    const config = JSON.parse(readFileSync(join(dir, 'fusion.json'), 'utf8')) as Record<string, unknown>;
    const wrong = join(dir, 'wrong.json');
    writeFileSync(wrong, JSON.stringify({ ...config, spConnectorInstanceId: 'f'.repeat(32) }));
    const r = await aggregateOnce(wrong);
    expect(r.code).toBe(1);
    expect(r.err).toContain('No source on the platform has connector instance id ffff');
    expect(r.err).toContain('connectorAttributes.spConnectorInstanceId');
    expect(r.err).toContain('[SOURCE_NOT_FOUND]');
    expect(r.err).not.toContain(ready.clientSecret);
  });
});

describe('the simulator playing the platform, when the connector fails', () => {
  it("a wrong proxy password fails the task with the connector's error, and nothing is ingested", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fusion-rehearsal-bad-'));
    const runner = createProductionRunner({});
    const server = await startServer(
      loadEnv({ PORT: '0', HOST: '127.0.0.1', PROXY_PASSWORD: PASSWORD, METRICS_ENABLED: 'false' }),
      { runner, logger: createLogger({ destination: { write: () => undefined } }) },
    );
    const stop = new AbortController();
    let line = '';
    let printed!: () => void;
    const isReady = new Promise<void>((r) => (printed = r));
    const exit = simulator(
      [
        '--rps-limit',
        '0',
        '--write-config',
        join(dir, 'fusion.json'),
        '--connector-url',
        `${server.url}/`,
        '--proxy-password',
        'not-the-password-at-all',
      ],
      {
        signal: stop.signal,
        write: (t) => {
          line += t;
          printed();
        },
      },
    );
    try {
      await isReady;
      const r = await aggregateOnce(join(dir, 'fusion.json'));
      expect(r.code).toBe(1);
      const result = JSON.parse(r.out) as { state: string; messages: string[] };
      expect(result.state).toBe('ERROR');
      expect(result.messages[0]).toMatch(/std:account:list failed at .* \(HTTP 401\) \[PROXY_UNAUTHORIZED\]/);
      expect(result.messages.join(' ')).not.toContain('not-the-password-at-all');
      const info = JSON.parse(line) as Ready & { clientId: string };
      expect(info.connectorUrl).toBe(`${server.url}/`);
      // Nothing was ingested: the connector's source still has no accounts on the platform.
      const token = await fetchToken(info, info.clientId, info.clientSecret);
      const filter = encodeURIComponent(`sourceId eq "${info.fusionSourceId}"`);
      const res = await fetch(`${info.baseurl}/v3/accounts?filters=${filter}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([]);
    } finally {
      stop.abort();
      await exit;
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects --connector-url without a password, or one that is not http(s), with exit code 2', async () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const saved = process.env['PROXY_PASSWORD'];
    delete process.env['PROXY_PASSWORD'];
    try {
      const quiet = { write: () => undefined };
      expect(await simulator(['--connector-url', 'http://127.0.0.1:1/'], quiet)).toBe(2);
      expect(String(stderr.mock.calls.at(-1)?.[0])).toContain('--proxy-password');
      expect(await simulator(['--connector-url', 'ftp://x/', '--proxy-password', 'p'], quiet)).toBe(2);
      expect(await simulator(['--proxy-password', 'p'], quiet)).toBe(2);
      expect(await simulator(['--config', '/nonexistent/fusion.json'], quiet)).toBe(2);
      expect(String(stderr.mock.calls.at(-1)?.[0])).toContain('cannot read /nonexistent/fusion.json');
    } finally {
      if (saved !== undefined) process.env['PROXY_PASSWORD'] = saved;
      stderr.mockRestore();
    }
  });
});
