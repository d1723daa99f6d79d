import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { run, type InvokeIo } from '../../src/cli/invoke';
import {
  closedPortUrl,
  generateSelfSignedCert,
  startFakeProxyServer,
  writeChunk,
  type TestServer,
} from '../support/fake-proxy-server';

const PASSWORD = 'Cli-Proxy-Secret-55102';
const CLIENT_SECRET = 'cli-client-secret-77123';

let dir: string;
const servers: TestServer[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fusion-invoke-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

function capture(onWrite?: (text: string) => void): { stream: Writable; text: () => string } {
  const parts: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      parts.push(chunk.toString('utf8'));
      onWrite?.(chunk.toString('utf8'));
      cb();
    },
  });
  return { stream, text: () => parts.join('') };
}

function io(
  env: Record<string, string | undefined> = {},
  onStdout?: (text: string) => void,
): { io: InvokeIo; out: () => string; err: () => string } {
  const out = capture(onStdout);
  const err = capture();
  return { io: { stdout: out.stream, stderr: err.stream, env }, out: out.text, err: err.text };
}

async function server(
  handler: Parameters<typeof startFakeProxyServer>[0],
  opts?: Parameters<typeof startFakeProxyServer>[1],
): Promise<TestServer> {
  const s = await startFakeProxyServer(handler, opts);
  servers.push(s);
  return s;
}

const config = { baseurl: 'https://tenant.api.example.com', clientId: 'cid', clientSecret: CLIENT_SECRET };

describe('fusion-proxy invoke', () => {
  it('prints one NDJSON line per item as it arrives, and sends type, input and config', async () => {
    let release: () => void = () => undefined;
    const firstPrinted = new Promise<void>((r) => (release = r));
    const s = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"id":"u1","name":"Zoë"}\n');
      await firstPrinted;
      res.end('{"id":"u2"}\n');
    });
    const t = io({}, (text) => {
      if (text.includes('"u1"')) release();
    });
    const code = await run(
      [
        '--url',
        s.url,
        '--password',
        PASSWORD,
        '--type',
        'std:account:list',
        '--config',
        file('c1.json', config),
        '--input',
        file('i1.json', { stateful: false }),
      ],
      t.io,
    );
    expect({ code, err: t.err() }).toEqual({ code: 0, err: '' });
    expect(t.out()).toBe('{"id":"u1","name":"Zoë"}\n{"id":"u2"}\n');
    expect(s.requests[0]!.body).toEqual({
      type: 'std:account:list',
      input: { stateful: false },
      config: { ...config, proxyEnabled: false, proxyPassword: PASSWORD },
    });
  });

  it('takes the password from env PROXY_PASSWORD and the URL from the configuration', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"status":"ok"}]');
    });
    const t = io({ PROXY_PASSWORD: PASSWORD });
    const code = await run(
      ['--type', 'std:test-connection', '--config', file('c2.json', { ...config, proxyUrl: s.url })],
      t.io,
    );
    expect(code).toBe(0);
    expect(t.out()).toBe('{"status":"ok"}\n');
    expect((s.requests[0]!.body as { config: { proxyPassword: string } }).config.proxyPassword).toBe(PASSWORD);
  });

  it('trusts a custom CA for an https URL', async () => {
    const tls = generateSelfSignedCert();
    const s = await server(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[{"status":"ok"}]');
      },
      { tls },
    );
    const argv = ['--url', s.url, '--type', 'std:test-connection', '--config', file('c3.json', config)];
    const without = io({ PROXY_PASSWORD: PASSWORD });
    expect(await run(argv, without.io)).toBe(1);
    expect(without.err()).toMatch(/TLS handshake .* failed.*\[PROXY_TLS_FAILED\]/);
    const withCa = io({ PROXY_PASSWORD: PASSWORD });
    expect(await run([...argv, '--ca', file('ca.pem', tls.cert)], withCa.io)).toBe(0);
    expect(withCa.out()).toBe('{"status":"ok"}\n');
  });

  it('a failing command: message and code on stderr, exit 1, no secret anywhere', async () => {
    const s = await server((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `boom while using ${CLIENT_SECRET}` }));
    });
    const t = io();
    const code = await run(
      ['--url', s.url, '--password', PASSWORD, '--type', 'std:account:list', '--config', file('c4.json', config)],
      t.io,
    );
    expect(code).toBe(1);
    expect(t.out()).toBe('');
    expect(t.err()).toMatch(
      /^fusion-proxy invoke: The proxy server at http:\/\/127\.0\.0\.1:\d+\/ failed to run std:account:list \(HTTP 500\): boom while using \[redacted\]\. .*\[PROXY_SERVER_ERROR\]\n$/,
    );
    expect(t.err()).not.toContain(PASSWORD);
    expect(t.err()).not.toContain(CLIENT_SECRET);
  });

  it('a one-letter password hides nothing it is not: words that contain it stay whole', async () => {
    const s = await server((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'the proxy could not read x from the index' }));
    });
    const t = io();
    const code = await run(
      ['--url', s.url, '--password', 'x', '--type', 'std:account:list', '--config', file('c4x.json', config)],
      t.io,
    );
    expect(code).toBe(1);
    expect(t.err()).toContain('The proxy server at');
    expect(t.err()).toContain('the proxy could not read x from the index');
    expect(t.err()).not.toMatch(/pro\[redacted\]y/);
  });

  it('connection refused exits 1 with the URL and the cause', async () => {
    const url = await closedPortUrl();
    const t = io({ PROXY_PASSWORD: PASSWORD });
    expect(await run(['--url', url, '--type', 'std:test-connection', '--config', file('c5.json', config)], t.io)).toBe(
      1,
    );
    expect(t.err()).toContain(`Cannot connect to the proxy server at ${url}: connection refused`);
  });

  it('an empty result succeeds with a warning on stderr', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end();
    });
    const t = io({ PROXY_PASSWORD: PASSWORD });
    expect(await run(['--url', s.url, '--type', 'std:account:list', '--config', file('c6.json', config)], t.io)).toBe(
      0,
    );
    expect(t.out()).toBe('');
    expect(t.err()).toMatch(
      /^fusion-proxy invoke: warning: the proxy server returned an empty result for std:account:list/,
    );
  });

  it.each([
    [[], /--type is required/],
    [
      ['--type', 'std:account:delete', '--config', 'x'],
      /unknown command type "std:account:delete"; expected one of: std:test-connection/,
    ],
    [['--type', 'std:account:list'], /--config FILE is required/],
    [
      ['--type', 'std:account:list', '--config', '/nonexistent/c.json'],
      /cannot read the config file \/nonexistent\/c\.json/,
    ],
    [['--type', 'std:account:list', '--bogus'], /Unknown option '--bogus'/],
    [['--type', 'std:account:list', '--config', 'BAD_JSON'], /the config file .* is not valid JSON/],
    [['--type', 'std:account:list', '--config', 'ARRAY_JSON'], /must contain a JSON object/],
    [['--type', 'std:account:list', '--config', 'GOOD'], /no proxy URL: pass --url/],
    [['--type', 'std:account:list', '--config', 'GOOD', '--url', 'http://127.0.0.1:1/'], /no proxy password/],
    [
      [
        '--type',
        'std:account:list',
        '--config',
        'GOOD',
        '--url',
        'http://127.0.0.1:1/',
        '--password',
        'pw-123456789',
        '--idle-timeout-ms',
        '0',
      ],
      /--idle-timeout-ms must be a positive integer/,
    ],
  ])('usage error %j exits 2 with a clear message', async (argv, pattern) => {
    const files: Record<string, string> = {
      BAD_JSON: file('bad.json', '{nope'),
      ARRAY_JSON: file('arr.json', '[]'),
      GOOD: file('good.json', config),
    };
    const t = io();
    const code = await run(
      argv.map((a) => files[a] ?? a),
      t.io,
    );
    expect(code).toBe(2);
    expect(t.err()).toMatch(pattern);
    expect(t.err()).toContain('usage: fusion-proxy invoke');
  });

  it('--help prints the usage and exits 0', async () => {
    const t = io();
    expect(await run(['--help'], t.io)).toBe(0);
    expect(t.out()).toMatch(/^usage: fusion-proxy invoke/);
    expect(t.out()).toContain('PROXY_PASSWORD');
  });
});
