import type { EmbeddedDispatcher } from '../../src/dispatch/embedded-dispatcher';
import { waitListKey } from '../../src/queue/queue-names';
import { ScriptedRunner } from '../support/scripted-runner';
import { commandBody, delay, ndjsonItems, post, startHarness, workerFor, type Mode } from './harness';

const MODES: Mode[] = ['embedded', 'queue'];

describe.each(MODES)('shutdown (SIGTERM path), %s mode', (mode) => {
  it('aborts a stream still open after SHUTDOWN_GRACE_MS, cancels its command, and close() completes', async () => {
    const h = await startHarness(mode, { SHUTDOWN_GRACE_MS: '200' });
    // Alive (progress) but far from done: only the end of the grace period can stop it.
    const pending = post(`${h.base}/proxy`, commandBody({ items: 2, delayBetweenMs: 60_000, progressEveryMs: 50 }));
    await h.runner.waitFor((e) => e[0]?.emitted === 1);
    await h.close();
    const res = await pending;
    expect(res.status).toBe(200);
    // Never a short success: the response is cut without its terminating chunk.
    expect(res.complete).toBe(false);
    expect(ndjsonItems(res.body)).toHaveLength(1);
    expect(h.runner.executions[0]!.cancelled).toBe(true);
    expect(h.runner.executions[0]!.finished).toBe(false);
  });

  it('answers new requests 503 SERVER_SHUTTING_DOWN (not a refused connection) while open streams finish, /readyz 503, /healthz 200', async () => {
    const h = await startHarness(mode, { SHUTDOWN_GRACE_MS: '60000' });
    // A stream that is under way and ends only when the test says so (it is cancelled by nothing else).
    const open = post(`${h.base}/proxy`, commandBody({ items: 3, gateAfterItems: 1, gate: 'finish' }));
    await h.runner.waitFor((e) => e[0]?.emitted === 1);
    const closing = h.server.close();
    try {
      const late = await post(`${h.base}/proxy`, commandBody({ items: 1 }));
      expect(late.status).toBe(503);
      expect(JSON.parse(late.body)).toEqual({
        error: expect.stringMatching(/shutting down.*run the command again/),
        code: 'SERVER_SHUTTING_DOWN',
      });
      expect(late.headers.connection).toBe('close');
      const ready = await fetch(`${h.base}/readyz`);
      expect(ready.status).toBe(503);
      const live = await fetch(`${h.base}/healthz`);
      expect(live.status).toBe(200);
      // The late command never ran; the open one finishes whole.
      h.runner.release('finish');
      const res = await open;
      expect(res.complete).toBe(true);
      expect(ndjsonItems(res.body)).toHaveLength(3);
      expect(h.runner.executions).toHaveLength(1);
    } finally {
      await closing;
      await h.redis?.quit();
    }
  });

  it('answers 503 "shutting down" to a command still waiting for a slot when the grace ends', async () => {
    // One slot, taken by a command that never ends: the second request waits (embedded: for a
    // slot; queue with ROLE=api: in the queue, no worker at all).
    const h = await startHarness(mode, {
      SHUTDOWN_GRACE_MS: '200',
      WORKER_CONCURRENCY: '1',
      ...(mode === 'queue' ? { ROLE: 'api' } : {}),
    });
    const first =
      mode === 'embedded' ? post(`${h.base}/proxy`, commandBody({ items: 2, hangAfterItems: 1 })) : undefined;
    if (first) await h.runner.waitFor((e) => e[0]?.emitted === 1);
    const waiting = post(`${h.base}/proxy`, commandBody({ items: 1 }));
    if (mode === 'queue') {
      const key = waitListKey(h.env.QUEUE_NAME);
      while ((await h.redis!.llen(key)) === 0) await delay(10);
    } else {
      const d = h.server.dispatcher as EmbeddedDispatcher;
      while (d.waitingForSlot === 0) await delay(10);
    }
    const redis = h.redis;
    try {
      const closing = h.server.close();
      const res = await waiting;
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body).error).toMatch(/shutting down.*run the command again/);
      await closing;
      if (first) expect((await first).complete).toBe(false);
      // The job nobody started was taken out of the queue before close() returned, so no later worker runs it.
      if (redis) expect(await redis.llen(waitListKey(h.env.QUEUE_NAME))).toBe(0);
      expect(h.runner.executions.filter((e) => e.finished)).toHaveLength(0);
    } finally {
      await redis?.quit();
    }
  });
});

describe('shutdown of a worker in the middle of a job (queue mode)', () => {
  it('fails the job with a clear error the api answers with, instead of leaving the api waiting', async () => {
    const h = await startHarness('queue', { ROLE: 'api' });
    const runner = new ScriptedRunner();
    const worker = workerFor(h, runner);
    try {
      // Silent but alive (progress), so only the shutdown can end it.
      const pending = post(
        `${h.base}/proxy`,
        commandBody({ items: 1, delayBeforeFirstMs: 60_000, progressEveryMs: 50 }),
      );
      await runner.waitFor((e) => e.length === 1);
      await worker.close(100);
      const res = await pending;
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body).error).toMatch(
        /worker running this command shut down before it finished.*run the command again/,
      );
      expect(runner.executions[0]!.cancelled).toBe(true);
      expect(runner.executions[0]!.finished).toBe(false);
    } finally {
      await worker.close();
      await h.close();
    }
  });
});
