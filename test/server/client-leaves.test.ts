/**
 * A client that leaves while the api is blocked on it (its socket full, the command's output
 * backed up behind it) cancels the command at once: the runner's signal fires and, in queue mode,
 * the result stream is deleted. Nothing waits for REQUEST_TIMEOUT_MS.
 */
import type { EmbeddedDispatcher } from '../../src/dispatch/embedded-dispatcher';
import { commandBody, delay, post, startHarness, type Harness, type Mode } from './harness';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(60_000));

describe.each<Mode>(['embedded', 'queue'])('a client that leaves while the api waits on it (%s mode)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode, { REQUEST_TIMEOUT_MS: '300000' });
  });
  afterAll(async () => {
    await h.close();
  });

  async function streamLength(): Promise<number> {
    const keys = await h.redis!.keys(`fusion:${h.env.QUEUE_NAME}:*:out`);
    let max = 0;
    for (const k of keys) max = Math.max(max, await h.redis!.xlen(k));
    return max;
  }

  it('cancels the command and frees its stream', async () => {
    const before = h.runner.executions.length;
    // The output backs up behind the paused client until the api stops pulling (channel or stream at its bound).
    const backedUp = async (): Promise<boolean> =>
      mode === 'queue'
        ? (await streamLength()) >= 8
        : (h.server.dispatcher as EmbeddedDispatcher).maxBacklogSeen > 512 * 1024;
    const res = await post(`${h.base}/proxy`, commandBody({ items: 200_000, itemBytes: 400 }), {
      onChunk: (_s, req, r) => {
        r.pause();
        void (async () => {
          while (!(await backedUp())) await delay(10);
          req.destroy();
        })();
      },
    });
    expect(res.complete).toBe(false);
    await h.runner.waitFor((e) => e.length > before && e[before]!.cancelled);
    expect(h.runner.executions[before]!.finished).toBe(false);
    if (mode === 'queue') {
      while ((await h.redis!.keys(`fusion:${h.env.QUEUE_NAME}:*:out`)).length > 0) await delay(20);
      while (h.server.worker!.activeJobs > 0) await delay(20);
    }
  });
});
