/**
 * Through a real nginx left at its defaults (proxy_http_version 1.0 towards the proxy server): a
 * command that fails after its first item must fail for the client behind nginx too; with a clean
 * close from the server, nginx would take the end of the HTTP/1.0 body for a complete answer and
 * hand its client a well-terminated, short response.
 */
import { startNginx, type RunningNginx } from '../support/nginx';
import { isFusionError } from '../../src/core/errors';
import { invokeProxy } from '../../src/proxy-client';
import { PASSWORD, commandBody, startHarness, type Harness, type Mode } from './harness';

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
    fetch(`${nginx.url}/proxy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(commandBody(script)),
    });

  it('a complete answer arrives complete', async () => {
    const res = await postThrough({ items: 50, itemBytes: 200 });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\n').filter((l) => l.trim());
    expect(lines).toHaveLength(50);
  });

  it("our proxy client behind nginx fails the command (the reason line may not survive nginx's buffering)", async () => {
    const seen: unknown[] = [];
    const err = await invokeProxy(
      {
        url: `${nginx.url}/proxy`,
        password: PASSWORD,
        type: 'std:account:list',
        input: {
          script: {
            items: 50,
            itemBytes: 200,
            failAfterItems: 5,
            delayBetweenMs: 5,
            failMessage: 'source HR went away',
          },
        },
        config: commandBody().config as Record<string, unknown>,
      },
      (item) => void seen.push(item),
    ).catch((e: unknown) => e);
    // nginx drops what it still buffers when the upstream resets, often the closing error line with it:
    // then the client knows that it failed but not why. Never a success.
    expect(isFusionError(err)).toBe(true);
    const { code, message } = err as { code: string; message: string };
    expect(['PROXY_SERVER_ERROR', 'PROXY_STREAM_ABORTED']).toContain(code);
    if (code === 'PROXY_SERVER_ERROR') expect(message).toContain('source HR went away');
    expect(message).toMatch(/incomplete and was not accepted/);
    expect(seen.length).toBeLessThanOrEqual(5);
  });

  it("a configuration over nginx's own body limit (1 MB default): the client is told to raise the reverse proxy's limit, not BODY_LIMIT_BYTES", async () => {
    const err = await invokeProxy(
      {
        url: `${nginx.url}/proxy`,
        password: PASSWORD,
        type: 'std:account:list',
        input: { script: { items: 1 }, blob: 'x'.repeat(2 * 1024 * 1024) },
        config: commandBody().config as Record<string, unknown>,
      },
      () => undefined,
    ).catch((e: unknown) => e);
    expect(isFusionError(err)).toBe(true);
    const { message } = err as Error;
    expect(message).toMatch(/HTTP 413/);
    expect(message).toMatch(/reverse proxy or ingress in front of the proxy server, not by fusion-proxy/);
    expect(message).toMatch(/client_max_body_size/);
    expect(message).not.toMatch(/raise BODY_LIMIT_BYTES on the server/);
  });

  it('a command that fails after its first item is a failed read for the client behind nginx (Node fetch)', async () => {
    const res = await postThrough({ items: 50, itemBytes: 200, failAfterItems: 5, delayBetweenMs: 5 });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });
});
