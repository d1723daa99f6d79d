import { invokeProxy, type ProxyItem } from '../../src/proxy-client';
import { isFusionError } from '../../src/core/errors';
import { startHarness, PASSWORD, CLIENT_SECRET, type Harness, type Mode } from '../server/harness';
import { scaled } from '../support/time-factor';

/**
 * The two halves of the proxy protocol, written separately, against each other: the real proxy
 * client posting to the real server (Fastify api, and in queue mode BullMQ + Redis streams).
 */
const MODES: Mode[] = ['embedded', 'queue'];

function config(password = PASSWORD): Record<string, unknown> {
  return {
    proxyEnabled: true,
    proxyPassword: password,
    baseurl: 'https://tenant.example',
    clientId: 'cid',
    clientSecret: CLIENT_SECRET,
  };
}

describe.each(MODES)('proxy client against the real server (%s mode)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode, { HEARTBEAT_INTERVAL_MS: '50' });
  });
  afterAll(async () => {
    await h.close();
  });

  const url = (): string => `${h.base}/proxy`;

  it('streams every item in order, and the runner saw a config it can use', async () => {
    const seen: ProxyItem[] = [];
    const result = await invokeProxy(
      {
        url: url(),
        password: PASSWORD,
        type: 'std:account:list',
        input: { script: { items: 2000, itemBytes: 200 } },
        config: config(),
      },
      (item) => void seen.push(item),
    );
    expect(result.items).toBe(2000);
    expect(seen.map((i) => i.i)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    const exec = h.runner.executions.at(-1)!;
    expect(exec.config.proxyPassword).toBeUndefined();
    expect(exec.config.proxyEnabled).toBe(false);
    expect(exec.config.clientSecret).toBe(CLIENT_SECRET);
  });

  it('stays alive on heartbeats while the command is silent for longer than the client idle timeout', async () => {
    const seen: ProxyItem[] = [];
    await invokeProxy(
      {
        url: url(),
        password: PASSWORD,
        type: 'std:account:list',
        input: { script: { items: 1, delayBeforeFirstMs: scaled(1500), progressEveryMs: 50 } },
        config: config(),
        // Without the server's 50 ms heartbeats this call would time out after 600 ms of silence (a
        // limit, so TEST_TIME_FACTOR scales it, and the silence with it: the silence stays the longer).
        // 150 ms was three heartbeats, and a loaded 2-core machine once held one back that long.
        timeouts: { idleMs: scaled(600) },
      },
      (item) => void seen.push(item),
    );
    expect(seen).toHaveLength(1);
  });

  it('a wrong password is a PROXY_UNAUTHORIZED error naming the URL, and nothing runs', async () => {
    const before = h.runner.count;
    const err = await invokeProxy(
      {
        url: url(),
        password: 'not-the-password',
        type: 'std:test-connection',
        input: {},
        config: config('not-the-password'),
      },
      () => undefined,
    ).catch((e: unknown) => e);
    expect(isFusionError(err, 'PROXY_UNAUTHORIZED')).toBe(true);
    expect((err as Error).message).toContain(url());
    expect((err as Error).message).not.toContain('not-the-password');
    expect(h.runner.count).toBe(before);
  });

  it('a failure before the first item carries the server message', async () => {
    const err = await invokeProxy(
      {
        url: url(),
        password: PASSWORD,
        type: 'std:account:list',
        input: { script: { failBeforeFirst: 'source HR does not exist' } },
        config: config(),
      },
      () => undefined,
    ).catch((e: unknown) => e);
    expect(isFusionError(err, 'PROXY_SERVER_ERROR')).toBe(true);
    expect((err as Error).message).toContain('source HR does not exist');
  });

  it('a failure after the first item fails the command instead of returning a short result', async () => {
    const seen: ProxyItem[] = [];
    const err = await invokeProxy(
      {
        url: url(),
        password: PASSWORD,
        type: 'std:account:list',
        input: { script: { items: 10, failAfterItems: 3, failMessage: 'boom' } },
        config: config(),
      },
      (item) => void seen.push(item),
    ).catch((e: unknown) => e);
    // The server's code and message arrive although the status line was long sent.
    expect(isFusionError(err, 'PROXY_SERVER_ERROR')).toBe(true);
    expect((err as Error).message).toMatch(
      new RegExp(
        `failed std:account:list after ${seen.length} item\\(s\\) had been sent: .*boom.*incomplete and was not accepted`,
      ),
    );
    expect(seen.length).toBeLessThan(10);
  });

  it('aborting the client call cancels the command on the server', async () => {
    const controller = new AbortController();
    const call = invokeProxy(
      {
        url: url(),
        password: PASSWORD,
        type: 'std:account:list',
        input: { script: { items: 100, hangAfterItems: 1 } },
        config: config(),
        signal: controller.signal,
      },
      () => controller.abort(),
    ).catch((e: unknown) => e);
    expect(isFusionError(await call)).toBe(true);
    await h.runner.waitFor((execs) =>
      execs.some(
        (e) =>
          e.input.script !== undefined &&
          (e.input.script as { hangAfterItems?: number }).hangAfterItems === 1 &&
          e.cancelled,
      ),
    );
  });
});
