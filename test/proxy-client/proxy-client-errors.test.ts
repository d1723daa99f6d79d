import net from 'node:net';
import { FusionError, type FusionErrorCode } from '../../src/core/errors';
import { invokeProxy, type ProxyItem, type ProxyRequestOptions } from '../../src/proxy-client';
import {
  closedPortUrl,
  generateSelfSignedCert,
  startFakeProxyServer,
  startSilentServer,
  writeChunk,
  type TestServer,
} from '../support/fake-proxy-server';
import { captureLogger } from './capture-logger';

const PASSWORD = 'Pr0xy-Secret-Do-Not-Leak-7781';
const CLIENT_SECRET = 'client-secret-do-not-leak-5512';

/** Every message and log line produced in this file, checked for secrets at the end. */
const seenTexts: string[] = [];
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(() => {
  expect(seenTexts.length).toBeGreaterThan(10);
  for (const t of seenTexts) {
    expect(t).not.toContain(PASSWORD);
    expect(t).not.toContain(CLIENT_SECRET);
  }
});

function options(
  url: string,
  extra: Partial<ProxyRequestOptions> = {},
): ProxyRequestOptions & { logger: ReturnType<typeof captureLogger> } {
  return {
    url,
    password: PASSWORD,
    type: 'std:account:list',
    input: {},
    config: {
      baseurl: 'https://tenant.api.example.com',
      clientId: 'cid',
      clientSecret: CLIENT_SECRET,
      proxyEnabled: true,
      proxyUrl: url,
    },
    timeouts: { connectMs: 5_000, idleMs: 5_000 },
    logger: captureLogger(),
    ...extra,
  } as ProxyRequestOptions & { logger: ReturnType<typeof captureLogger> };
}

async function run(
  opts: ProxyRequestOptions & { logger: ReturnType<typeof captureLogger> },
): Promise<{ items: ProxyItem[]; error?: FusionError }> {
  const items: ProxyItem[] = [];
  try {
    await invokeProxy(opts, (item) => {
      items.push(item);
    });
    return { items };
  } catch (e) {
    if (!(e instanceof FusionError)) throw e;
    seenTexts.push(e.message, JSON.stringify(e.details));
    return { items, error: e };
  } finally {
    seenTexts.push(...opts.logger.lines.map((l) => l.text));
  }
}

async function expectFailure(
  opts: ProxyRequestOptions & { logger: ReturnType<typeof captureLogger> },
  code: FusionErrorCode,
  pattern: RegExp,
): Promise<{ items: ProxyItem[]; error: FusionError }> {
  const r = await run(opts);
  expect(r.error).toBeDefined();
  const error = r.error as FusionError;
  expect({ code: error.code, message: error.message }).toEqual({ code, message: expect.stringMatching(pattern) });
  return { items: r.items, error };
}

async function server(
  handler: Parameters<typeof startFakeProxyServer>[0],
  opts?: Parameters<typeof startFakeProxyServer>[1],
): Promise<TestServer> {
  const s = await startFakeProxyServer(handler, opts);
  servers.push(s);
  return s;
}

describe('proxy client: request', () => {
  it('posts {type, input, config} with proxyEnabled false and the password in config.proxyPassword', async () => {
    const s = await server(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.end('{"status":"ok"}\n');
      },
      { path: '/fusion' },
    );
    const opts = options(s.url, { type: 'std:test-connection', input: { a: 1 } });
    const r = await run(opts);
    expect(r).toEqual({ items: [{ status: 'ok' }] });
    expect(s.requests).toHaveLength(1);
    const rec = s.requests[0]!;
    expect(rec.method).toBe('POST');
    expect(rec.path).toBe('/fusion');
    expect(rec.headers['content-type']).toBe('application/json');
    expect(rec.body).toEqual({
      type: 'std:test-connection',
      input: { a: 1 },
      config: { ...opts.config, proxyEnabled: false, proxyPassword: PASSWORD },
    });
  });
});

describe("proxy client: the spec's error rows", () => {
  it('connection refused names the URL and the cause', async () => {
    const url = await closedPortUrl();
    const { error } = await expectFailure(options(url), 'PROXY_CONNECTION_FAILED', /connection refused/);
    expect(error.message).toContain(url);
  });

  it('DNS failure names the host problem', async () => {
    const url = 'http://fusion-proxy-does-not-exist.invalid:8080/run';
    const { error } = await expectFailure(
      options(url),
      'PROXY_CONNECTION_FAILED',
      /DNS lookup of the host name failed/,
    );
    expect(error.message).toContain(url);
  });

  it('idle timeout: a server that accepts and never answers', async () => {
    const s = await startSilentServer();
    servers.push(s);
    const { error } = await expectFailure(
      options(s.url, { timeouts: { connectMs: 5_000, idleMs: 300 } }),
      'PROXY_TIMEOUT',
      /did not answer std:account:list within 300 ms/,
    );
    expect(error.message).toContain(s.url);
    expect(error.details).toMatchObject({ timeout: 'idle' });
  });

  it('connect timeout: an https URL whose server never completes the TLS handshake', async () => {
    const s = await startSilentServer();
    servers.push(s);
    const url = `https://127.0.0.1:${s.port}/`;
    const { error } = await expectFailure(
      options(url, { timeouts: { connectMs: 300, idleMs: 5_000 } }),
      'PROXY_TIMEOUT',
      /no connection and TLS handshake within 300 ms/,
    );
    expect(error.message).toContain(url);
    expect(error.details).toMatchObject({ timeout: 'connect' });
  });

  it('idle timeout in the middle of the body fails the command after the items already received', async () => {
    const s = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"n":1}\n');
      // then silence, connection kept open
    });
    const { items } = await expectFailure(
      options(s.url, { timeouts: { idleMs: 300 } }),
      'PROXY_TIMEOUT',
      /sent nothing for 300 ms/,
    );
    expect(items).toEqual([{ n: 1 }]);
  });

  it('heartbeats (blank lines) reset the idle timer', async () => {
    const s = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"n":1}\n');
      // 12 heartbeats 50 ms apart: 600 ms of no data, twice the idle timeout.
      for (let i = 0; i < 12; i++) {
        await new Promise((r) => setTimeout(r, 50));
        await writeChunk(res, '\n');
      }
      res.end('{"n":2}\n');
    });
    let beats = 0;
    const r = await run(options(s.url, { timeouts: { idleMs: 300 }, onHeartbeat: () => (beats += 1) }));
    expect(r).toEqual({ items: [{ n: 1 }, { n: 2 }] });
    expect(beats).toBe(12);
  });

  describe('TLS', () => {
    let tls: { key: string; cert: string };
    beforeAll(() => {
      tls = generateSelfSignedCert();
    });

    it('a self-signed certificate fails the handshake with a TLS error naming the URL', async () => {
      const s = await server((_req, res) => void res.end('[]'), { tls });
      const { error } = await expectFailure(
        options(s.url),
        'PROXY_TLS_FAILED',
        /TLS handshake with the proxy server at https:\/\/127\.0\.0\.1:\d+\/ failed: .*self.signed/i,
      );
      expect(s.requests).toHaveLength(0);
      expect(error.details).toMatchObject({ cause: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    });

    it('the same server is accepted with its certificate given as a custom CA', async () => {
      const s = await server(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('[{"id":"u1"},{"id":"u2"}]');
        },
        { tls },
      );
      const r = await run(options(s.url, { ca: tls.cert }));
      expect(r).toEqual({ items: [{ id: 'u1' }, { id: 'u2' }] });
    });

    it('an https URL pointing at a plain-http server says the server speaks plain HTTP, not OpenSSL text or certificate advice', async () => {
      const s = await server((_req, res) => void res.end('[]'));
      const { error } = await expectFailure(
        options(s.url.replace('http:', 'https:')),
        'PROXY_TLS_FAILED',
        /^The proxy server at https:\/\/127\.0\.0\.1:\d+\/ answered the TLS handshake in plain text: this server speaks plain HTTP, not HTTPS\. Use http:\/\/ in the Proxy URL/,
      );
      expect(error.message).not.toMatch(/ssl3_get_record|openssl|install a valid certificate/i);
    });
  });

  it('401 with an error field: PROXY_UNAUTHORIZED with the server message, the echoed password redacted', async () => {
    const s = await server((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `proxy password mismatch (got ${PASSWORD})` }));
    });
    const { error } = await expectFailure(
      options(s.url),
      'PROXY_UNAUTHORIZED',
      /rejected the proxy password \(HTTP 401\): proxy password mismatch \(got \[redacted\]\)/,
    );
    expect(error.message).toContain(s.url);
    expect(error.details).toMatchObject({ status: 401 });
  });

  it('500 with an error field: PROXY_SERVER_ERROR with the server message', async () => {
    const s = await server((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Velocity error in attribute "uid": null reference $lastname' }));
    });
    const { error } = await expectFailure(
      options(s.url),
      'PROXY_SERVER_ERROR',
      /failed to run std:account:list \(HTTP 500\): Velocity error in attribute "uid": null reference \$lastname\. Read the proxy server logs/,
    );
    expect(error.details).toMatchObject({ status: 500 });
  });

  it('other statuses name the status and a remedy; non-JSON bodies are quoted', async () => {
    const s = await server((req, res) => {
      if (req.path === '/missing') {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<html>\n<body>Cannot POST /missing</body></html>');
      } else {
        res.writeHead(413, { 'content-type': 'application/json' });
        res.end('{"error":"request body larger than 10485760 bytes","code":"BODY_TOO_LARGE"}');
      }
    });
    await expectFailure(
      options(s.url.replace(/\/$/, '/missing')),
      'PROXY_SERVER_ERROR',
      /HTTP 404\): <html> <body>Cannot POST \/missing<\/body><\/html>\. Check the path of the Proxy URL/,
    );
    await expectFailure(
      options(s.url),
      'BODY_TOO_LARGE',
      /HTTP 413\): request body larger than 10485760 bytes\. .*raise BODY_LIMIT_BYTES on the server/,
    );
  });

  it("a 413 without our code (a reverse proxy's own page) names the reverse proxy's limit", async () => {
    const s = await server((_req, res) => {
      res.writeHead(413, { 'content-type': 'text/html' });
      res.end('<html><head><title>413 Request Entity Too Large</title></head><body>nginx</body></html>');
    });
    const { error } = await expectFailure(
      options(s.url),
      'PROXY_SERVER_ERROR',
      /HTTP 413\): .*413 Request Entity Too Large.*reverse proxy or ingress in front of the proxy server, not by fusion-proxy.*client_max_body_size/,
    );
    expect(error.message).not.toMatch(/raise BODY_LIMIT_BYTES on the server/);
  });

  it('a bare object is "Failed to parse JSON"', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key: { simple: { id: 'u1' } }, attributes: {} }));
    });
    const { items } = await expectFailure(
      options(s.url),
      'PROXY_BAD_RESPONSE',
      /^Failed to parse JSON from the proxy server at http:\/\/127\.0\.0\.1:\d+\/ \(std:account:list\): the body is a single bare JSON object/,
    );
    expect(items).toEqual([]);
  });

  it('a {data: [...]} wrapper is "Failed to parse JSON"', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ id: 'u1' }, { id: 'u2' }] }));
    });
    const { items } = await expectFailure(
      options(s.url),
      'PROXY_BAD_RESPONSE',
      /^Failed to parse JSON .*wraps its content in a "data" field/,
    );
    expect(items).toEqual([]);
  });

  it('spcx-style text appended after output lines fails the command instead of a short success', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"id":"u1"}\ngeneric error: \n + Error: boom after first chunk\n');
    });
    const { items } = await expectFailure(
      options(s.url),
      'PROXY_BAD_RESPONSE',
      /Failed to parse JSON .*line 2 is not valid JSON/,
    );
    expect(items).toEqual([{ id: 'u1' }]);
  });

  it('an empty result is a success with a warning logged', async () => {
    for (const [ct, body] of [
      ['application/json', '[]'],
      ['application/x-ndjson', ''],
      ['application/x-ndjson', '\n\n'],
    ] as const) {
      const s = await server((_req, res) => {
        res.writeHead(200, { 'content-type': ct });
        res.end(body);
      });
      const opts = options(s.url);
      const r = await run(opts);
      expect(r).toEqual({ items: [] });
      const warnings = opts.logger.lines.filter((l) => l.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.text).toMatch(/empty result for std:account:list/);
      expect(warnings[0]!.text).toContain(s.url);
    }
  });
});

describe('proxy client: truncated or aborted streams are failures, never short successes', () => {
  it('server destroys the socket in the middle of a chunked body', async () => {
    const s = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"n":1}\n{"n":2}\n{"n":');
      res.socket?.destroy();
    });
    const { items } = await expectFailure(
      options(s.url),
      'PROXY_STREAM_ABORTED',
      /broke off the response to std:account:list|closed the connection before the response/,
    );
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('server destroys the socket between two complete lines (only the HTTP framing shows the loss)', async () => {
    const s = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"n":1}\n');
      await new Promise((r) => setTimeout(r, 20));
      res.socket?.destroy();
    });
    const { items } = await expectFailure(options(s.url), 'PROXY_STREAM_ABORTED', /incomplete and was not accepted/);
    expect(items).toEqual([{ n: 1 }]);
  });

  it('a body shorter than its Content-Length', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': '100' });
      res.write('{"n":1}\n');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    await expectFailure(options(s.url), 'PROXY_STREAM_ABORTED', /incomplete and was not accepted/);
  });

  it('a JSON array without its closing bracket', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"n":1},{"n":2}');
    });
    const { items } = await expectFailure(
      options(s.url),
      'PROXY_STREAM_ABORTED',
      /is truncated: the JSON array ended without its closing bracket after 2 complete item/,
    );
    expect(items).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('an NDJSON last line without newline that does not parse', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"n":1}\n{"n":2,"name":"Jo');
    });
    const { items } = await expectFailure(
      options(s.url),
      'PROXY_STREAM_ABORTED',
      /is truncated: the body ended in the middle of line 2/,
    );
    expect(items).toEqual([{ n: 1 }]);
  });
});

describe('proxy client: options and cancellation', () => {
  it('rejects an invalid URL, a non-http scheme and an empty password before connecting', async () => {
    await expectFailure(options('not a url'), 'CONFIG_INVALID', /Proxy URL "not a url" is not a valid URL/);
    await expectFailure(options('ftp://proxy.example.com/x'), 'CONFIG_INVALID', /must use http or https, not ftp/);
    await expectFailure(options('http://127.0.0.1:1/', { password: '' }), 'CONFIG_INVALID', /Proxy password is empty/);
    await expectFailure(
      options('http://127.0.0.1:1/', { timeouts: { idleMs: -1 } }),
      'CONFIG_INVALID',
      /idleMs must be a positive/,
    );
  });

  it('never shows user info or the query string of the URL', async () => {
    const url = await closedPortUrl();
    const withCreds = url.replace('http://', `http://user:${PASSWORD}@`) + `?token=${CLIENT_SECRET}`;
    const { error } = await expectFailure(options(withCreds), 'PROXY_CONNECTION_FAILED', /connection refused/);
    expect(error.message).toContain(url);
  });

  it('an AbortSignal cancels a running call', async () => {
    const s = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"n":1}\n');
    });
    const ac = new AbortController();
    const opts = options(s.url, { signal: ac.signal });
    const items: ProxyItem[] = [];
    const p = invokeProxy(opts, (item) => {
      items.push(item);
      ac.abort();
    });
    await expect(p).rejects.toMatchObject({ code: 'COMMAND_CANCELLED' });
    expect(items).toEqual([{ n: 1 }]);
  });

  it('an error thrown by the callback stops the call and closes the connection', async () => {
    let closed: () => void = () => undefined;
    const serverSawClose = new Promise<void>((r) => (closed = r));
    const s = await server(async (_req, res) => {
      res.on('close', () => closed());
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"n":1}\n');
    });
    await expect(
      invokeProxy(options(s.url), () => {
        throw new Error('platform refused the item');
      }),
    ).rejects.toThrow('platform refused the item');
    await serverSawClose;
  });
});

/**
 * HTTP/1.0 framing (#10 item 1): no Content-Length, no chunks, the body ends where the connection
 * closes. The client cannot tell a clean close from a hop that swallowed the server's reset.
 */
describe('proxy client: close-delimited (HTTP/1.0) responses', () => {
  async function http10Server(body: string): Promise<string> {
    const srv = net.createServer((socket) => {
      socket.once('data', () => {
        socket.end(`HTTP/1.0 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n${body}`);
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    servers.push({ url: '', close: () => new Promise<void>((r) => srv.close(() => r())) } as unknown as TestServer);
    return `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}/`;
  }

  it('refuses an account list of heartbeats only: an empty list taken as complete deletes every account', async () => {
    const url = await http10Server('\n\n\n');
    await expectFailure(
      options(url),
      'PROXY_STREAM_ABORTED',
      /no accounts in a response without length or chunks.*cannot be told from one that was broken off.*proxy_http_version 1\.1/,
    );
  });

  it('accepts items it cannot check (documented), and an empty answer to a command other than the account list', async () => {
    const withItems = await run(options(await http10Server('\n{"identity":"a"}\n{"identity":"b"}\n')));
    expect(withItems.error).toBeUndefined();
    expect(withItems.items).toHaveLength(2);
    const schema = await run(options(await http10Server('\n'), { type: 'std:entitlement:list' }));
    expect(schema.error).toBeUndefined();
  });

  it("reads the closing error line of a broken-off stream and raises the server's code with its message", async () => {
    const url = await http10Server(
      '{"identity":"a"}\n#fusion-error {"code":"PLATFORM_RATE_LIMITED","error":"the platform kept answering 429"}\n',
    );
    const { items } = await expectFailure(
      options(url),
      'PLATFORM_RATE_LIMITED',
      /failed std:account:list after 1 item\(s\) had been sent: the platform kept answering 429\. The result is incomplete/,
    );
    expect(items).toHaveLength(1);
  });

  it('a closing error line with a code it does not know is PROXY_STREAM_ABORTED, and a malformed one is invalid JSON', async () => {
    await expectFailure(
      options(await http10Server('#fusion-error {"code":"SOMETHING_NEW","error":"x"}\n')),
      'PROXY_STREAM_ABORTED',
      /after 0 item\(s\) had been sent: x/,
    );
    await expectFailure(
      options(await http10Server('#fusion-error not json\n')),
      'PROXY_BAD_RESPONSE',
      /line 1 is not valid JSON/,
    );
  });
});
