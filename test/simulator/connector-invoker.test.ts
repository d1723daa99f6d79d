import { httpConnectorInvoker } from '../../src/simulator/connector-invoker';
import { startFakeProxyServer, writeChunk, type TestServer } from '../support/fake-proxy-server';

/** The simulator's own client for the platform's side of a proxy command, from the wire contract alone. */
describe('the simulator calling a connector over HTTP', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  async function serve(handler: Parameters<typeof startFakeProxyServer>[0]): Promise<string> {
    const s = await startFakeProxyServer(handler);
    servers.push(s);
    return s.url;
  }
  async function collect(url: string): Promise<{ items: Record<string, unknown>[]; error?: Error }> {
    const items: Record<string, unknown>[] = [];
    const invoke = httpConnectorInvoker({ url, password: 'pw-1234', config: () => ({ a: 1 }) });
    try {
      for await (const item of invoke('std:account:list', {})) items.push(item);
      return { items };
    } catch (e) {
      return { items, error: e as Error };
    }
  }

  it('sends type, input and the configuration with the password; skips heartbeats; reads items split across chunks', async () => {
    let body: unknown;
    const url = await serve(async (req, res) => {
      body = req.body;
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '\n{"identity":"a"}\n{"ident');
      await writeChunk(res, 'ity":"b"}\n\n');
      res.end('{"identity":"c"}');
    });
    const r = await collect(url);
    expect(r.error).toBeUndefined();
    expect(r.items.map((i) => i['identity'])).toEqual(['a', 'b', 'c']);
    expect(body).toEqual({ type: 'std:account:list', input: {}, config: { a: 1, proxyPassword: 'pw-1234' } });
  });

  it("an error status: the server's message and code", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"boom","code":"PLATFORM_UNREACHABLE"}');
    });
    const r = await collect(url);
    expect(r.error?.message).toMatch(/std:account:list failed at .* \(HTTP 500\) \[PLATFORM_UNREACHABLE\]: boom/);
  });

  it("the reason line after items: a failure with the server's code, the items before it delivered", async () => {
    const url = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"identity":"a"}\n#fusion-error {"code":"PLATFORM_RATE_LIMITED","error":"429s"}\n');
      res.socket?.resetAndDestroy();
    });
    const r = await collect(url);
    expect(r.items).toHaveLength(1);
    expect(r.error?.message).toMatch(/after output had started \[PLATFORM_RATE_LIMITED\]: 429s/);
  });

  it('a body cut short (reset, no terminating chunk) is never taken as complete', async () => {
    const url = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      await writeChunk(res, '{"identity":"a"}\n');
      res.socket?.destroy();
    });
    const r = await collect(url);
    expect(r.error?.message).toMatch(/was cut short .* nothing of it is taken as complete/);
  });

  it('a line that is not a JSON object fails with the line, not as a cut-short body', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end('{"identity":"a"}\nnot json\n');
    });
    const r = await collect(url);
    expect(r.error?.message).toContain('not JSON: not json');
  });

  it('nobody listening: says to check that the proxy server runs there', async () => {
    const url = await serve((_req, res) => {
      res.end();
    });
    await servers.pop()?.close();
    const r = await collect(url);
    expect(r.error?.message).toMatch(
      /cannot reach the connector at .* \(ECONNREFUSED\): is the proxy server running there\?/,
    );
  });
});
