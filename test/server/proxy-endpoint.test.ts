import {
  CLIENT_SECRET,
  PASSWORD,
  commandBody,
  delay,
  ndjsonItems,
  post,
  rawRequest,
  startHarness,
  streamError,
  type Harness,
  type Mode,
} from './harness';
import { scaled } from '../support/time-factor';

const MODES: Mode[] = ['embedded', 'queue'];

describe.each(MODES)('proxy endpoint, %s mode', (mode) => {
  let h: Harness;
  let url: string;

  beforeAll(async () => {
    h = await startHarness(mode);
    url = `${h.base}/proxy`;
  });
  afterAll(async () => {
    await h.close();
  });

  it('streams NDJSON items and gives the runner a config without the password, proxyEnabled false', async () => {
    const before = h.runner.count;
    const res = await post(url, commandBody({ items: 3 }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(res.complete).toBe(true);
    const items = ndjsonItems(res.body);
    expect(items).toHaveLength(3);
    expect(items[0]).toMatchObject({ i: 0 });
    expect(h.runner.count).toBe(before + 1);
    const exec = h.runner.executions[h.runner.executions.length - 1]!;
    expect(exec.config).not.toHaveProperty('proxyPassword');
    expect(exec.config.proxyEnabled).toBe(false);
    expect(exec.config.clientSecret).toBe(CLIENT_SECRET);
    expect(exec.input).toEqual({ script: { items: 3 } });
  });

  it('answers test connection with one bare object carrying status', async () => {
    const res = await post(url, commandBody({}, { type: 'std:test-connection' }));
    expect(res.status).toBe(200);
    expect(res.body.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(res.body)).toEqual({ status: 'ok', i: 0 });
  });

  it.each([
    ['wrong', { proxyPassword: 'nope' }],
    ['wrong case', { proxyPassword: PASSWORD.toUpperCase() }],
    ['empty', { proxyPassword: '' }],
    ['missing', {}],
    ['not a string', { proxyPassword: 12345 }],
  ])('rejects a %s password with 401 JSON and never runs the command', async (_label, pw) => {
    const before = h.runner.count;
    const body = commandBody();
    const { proxyPassword: _p, ...config } = body.config as Record<string, unknown>;
    const res = await post(url, { ...body, config: { ...config, ...pw } });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body).error).toMatch(/proxyPassword/);
    await delay(50);
    expect(h.runner.count).toBe(before);
  });

  it.each([
    ['truncated JSON', '{"type":"std:account:list","config":{', /Body is not valid JSON/],
    [
      'truncated JSON carrying the password',
      `{"type":"std:account:list","config":{"proxyPassword":"${PASSWORD}","clientSecret":"${CLIENT_SECRET}"`,
      /Body is not valid JSON/,
    ],
    ['a non-object body', '[1,2]', /JSON object/],
    ['a string body', '"hello"', /JSON object/],
    ['a missing config', JSON.stringify({ type: 'std:account:list', input: {} }), /config must be an object/],
    ['config as an array', JSON.stringify({ type: 'std:account:list', config: [] }), /config must be an object/],
    [
      'an unknown type',
      JSON.stringify({ ...commandBody(), type: 'std:account:explode' }),
      /unknown command type "std:account:explode"/,
    ],
    ['a missing type', JSON.stringify({ ...commandBody(), type: undefined }), /unknown command type/],
    ['input as a string', JSON.stringify({ ...commandBody(), input: 'x' }), /input must be an object/],
  ])('rejects %s with 400 JSON', async (_label, body, message) => {
    const before = h.runner.count;
    const res = await post(url, body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toMatch(message);
    expect(res.body).not.toContain(PASSWORD);
    expect(res.body).not.toContain(CLIENT_SECRET);
    expect(h.runner.count).toBe(before);
  });

  it('rejects an 11 MB body with 413 JSON', async () => {
    const res = await h.server.app.inject({
      method: 'POST',
      url: '/proxy',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ ...commandBody(), input: { blob: 'x'.repeat(11 * 1024 * 1024) } }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toMatch(/larger than 10485760 bytes \(BODY_LIMIT_BYTES\)/);
  });

  it('answers 415 JSON to a non-JSON content type and 404 JSON elsewhere', async () => {
    const res = await h.server.app.inject({
      method: 'POST',
      url: '/proxy',
      headers: { 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toMatch(/application\/json/);
    const missing = await h.server.app.inject({ method: 'POST', url: '/elsewhere', payload: {} });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toMatch(/no route/);
  });

  it('answers 500 with the message when the command fails before its first item', async () => {
    const res = await post(url, commandBody({ failBeforeFirst: 'platform said no' }));
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({ error: 'platform said no', code: 'PROXY_SERVER_ERROR' });
  });

  it('never lets a secret quoted in an error after the first item reach the client (the closing error line)', async () => {
    const res = await post(
      url,
      commandBody({ items: 3, failAfterItems: 1, failMessage: `token refresh failed: client_secret=${CLIENT_SECRET}` }),
    );
    expect(res.complete).toBe(false);
    expect(streamError(res.body)).toEqual({
      code: 'PROXY_SERVER_ERROR',
      error: 'token refresh failed: client_secret=[redacted]',
    });
    expect(res.body).not.toContain(CLIENT_SECRET);
  });

  it('never lets a secret quoted in a command error reach the client or the logs', async () => {
    const res = await post(
      url,
      commandBody({ failBeforeFirst: `token request failed: client_secret=${CLIENT_SECRET}` }),
    );
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toEqual({
      error: 'token request failed: client_secret=[redacted]',
      code: 'PROXY_SERVER_ERROR',
    });
    expect(h.logs.join('')).not.toContain(CLIENT_SECRET);
  });

  it('aborts the response with a TCP reset, without the terminating chunk, when the command fails after its first item (HTTP/1.1)', async () => {
    const failed = await rawRequest(url, commandBody({ items: 5, failAfterItems: 2, delayBetweenMs: 20 }), '1.1');
    expect(failed.reset).toBe(true);
    expect(failed.raw.endsWith('0\r\n\r\n')).toBe(false);
    const ok = await rawRequest(url, commandBody({ items: 2 }), '1.1');
    expect(ok).toMatchObject({ reset: false });
    expect(ok.raw.endsWith('0\r\n\r\n')).toBe(true);
  });

  it('over HTTP/1.0 (no chunked encoding) a failure after the first item is a reset, a success a clean close', async () => {
    const failed = await rawRequest(
      url,
      commandBody({ items: 5, failAfterItems: 2, delayBetweenMs: 20, failMessage: 'source HR went away' }),
      '1.0',
    );
    expect(failed.reset).toBe(true);
    // Before the reset, the reason, in a line a JSON parser refuses (so no client takes it for an item).
    const body = failed.raw.slice(failed.raw.indexOf('\r\n\r\n') + 4);
    expect(streamError(body)).toEqual({ code: 'PROXY_SERVER_ERROR', error: 'source HR went away' });
    expect(body.trimEnd().split('\n').at(-1)).toMatch(/^#fusion-error /);
    expect(() => JSON.parse(body.trimEnd().split('\n').at(-1)!)).toThrow(SyntaxError);
    const ok = await rawRequest(url, commandBody({ items: 2 }), '1.0');
    expect(ok.reset).toBe(false);
    expect(ok.raw).toMatch(/^HTTP\/1\.1 200/);
    expect(ok.raw).not.toMatch(/transfer-encoding: chunked/i);
    expect(ndjsonItems(ok.raw.slice(ok.raw.indexOf('\r\n\r\n') + 4))).toEqual(
      [{ i: 0 }, { i: 1 }].map((x) => expect.objectContaining(x)),
    );
  });

  it('cancels the command when the client disconnects mid-stream', async () => {
    const before = h.runner.count;
    const res = await post(url, commandBody({ items: 3, hangAfterItems: 1 }), {
      onChunk: (s, req) => {
        if (s.includes('"i":0')) req.destroy();
      },
    });
    expect(res.complete).toBe(false);
    await h.runner.waitFor((e) => e.length > before && e[before]!.cancelled);
    const exec = h.runner.executions[before]!;
    expect(exec.cancelled).toBe(true);
    expect(exec.finished).toBe(false);
    if (mode === 'queue') {
      const deadline = Date.now() + scaled(3000);
      while (h.server.worker!.activeJobs > 0 && Date.now() < deadline) await delay(20);
      expect(h.server.worker!.activeJobs).toBe(0);
    }
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    const health = await h.server.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    const ready = await h.server.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', mode });
    const metrics = await h.server.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('fusion_http_requests_total');
    expect(metrics.body).toContain(`fusion_stream_items_total{mode="${mode}"}`);
    expect(metrics.body).toMatch(/fusion_auth_failures_total\{reason="mismatch"\} \d+/);
    expect(metrics.body).toMatch(/fusion_jobs_total\{command="std:account:list",outcome="success"\} \d+/);
    if (mode === 'queue') {
      expect(metrics.body).toMatch(/fusion_queue_workers [1-9]/);
      expect(metrics.body).toMatch(/fusion_queue_jobs\{state="waiting"\} \d+/);
    }
    expect(metrics.body).not.toContain(PASSWORD);
    expect(metrics.body).not.toContain(CLIENT_SECRET);
  });

  it('never writes a secret to the logs', () => {
    const all = h.logs.join('');
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain(CLIENT_SECRET);
  });
});
