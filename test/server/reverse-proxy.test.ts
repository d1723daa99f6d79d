/**
 * Through a real nginx left at its defaults (proxy_http_version 1.0 towards the proxy server): a
 * command that fails after its first item must fail for the client behind nginx too; with a clean
 * close from the server, nginx would take the end of the HTTP/1.0 body for a complete answer and
 * hand its client a well-terminated, short response.
 */
import { startNginx, type RunningNginx } from '../support/nginx';
import { commandBody, startHarness, type Harness, type Mode } from './harness';

describe.each<Mode>(['embedded', 'queue'])('behind nginx (default proxy_http_version 1.0), %s mode', (mode) => {
  let h: Harness;
  let nginx: RunningNginx;
  beforeAll(async () => {
    h = await startHarness(mode);
    nginx = await startNginx(h.base);
  });
  afterAll(async () => {
    await nginx?.close();
    await h?.close();
  });

  const postThrough = (script: Record<string, unknown>): Promise<Response> =>
    fetch(`${nginx.url}/proxy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(commandBody(script)) });

  it('a complete answer arrives complete', async () => {
    const res = await postThrough({ items: 50, itemBytes: 200 });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\n').filter((l) => l.trim());
    expect(lines).toHaveLength(50);
  });

  it('a command that fails after its first item is a failed read for the client behind nginx (Node fetch)', async () => {
    const res = await postThrough({ items: 50, itemBytes: 200, failAfterItems: 5, delayBetweenMs: 5 });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });
});
