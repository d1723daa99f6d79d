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

  it.each(['GET', 'PUT', 'PATCH', 'DELETE'])('%s on the endpoint answers 405 with Allow: POST and a JSON error (Node fetch)', async (method) => {
    const res = await fetch(`${h.base}/proxy`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toEqual({ error: expect.stringContaining(`${method} is not allowed`), code: 'METHOD_NOT_ALLOWED' });
  });

  it('a gzip-encoded body answers 415 with the reason, and nothing runs', async () => {
    const before = h.runner.executions.length;
    const res = await fetch(`${h.base}/proxy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(commandBody({ items: 1 }))),
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({ error: expect.stringContaining('Content-Encoding "gzip"'), code: 'UNSUPPORTED_MEDIA_TYPE' });
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
});
