import type { EmbeddedDispatcher } from '../../src/dispatch/embedded-dispatcher';
import {
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

const MODES: Mode[] = ['embedded', 'queue'];

describe.each(MODES)('proxy streaming, %s mode', (mode) => {
  describe('heartbeat and request timeout', () => {
    let h: Harness;
    let url: string;
    beforeAll(async () => {
      h = await startHarness(mode, { HEARTBEAT_INTERVAL_MS: '40', REQUEST_TIMEOUT_MS: '400' });
      url = `${h.base}/proxy`;
    });
    afterAll(async () => {
      await h.close();
    });

    it('sends blank lines while the command is silent but making progress, then its items', async () => {
      const res = await post(url, commandBody({ items: 2, delayBeforeFirstMs: 700, progressEveryMs: 50 }));
      expect(res.status).toBe(200);
      expect(res.complete).toBe(true);
      const lines = res.body.split('\n');
      const firstItem = lines.findIndex((l) => l.startsWith('{'));
      expect(firstItem).toBeGreaterThanOrEqual(2);
      expect(lines.slice(0, firstItem).every((l) => l === '')).toBe(true);
      expect(ndjsonItems(res.body)).toHaveLength(2);
    });

    it('gives up on a command that shows no progress: heartbeats do not count, the runner is cancelled', async () => {
      const before = h.runner.count;
      const res = await post(url, commandBody({ items: 1, delayBeforeFirstMs: 5000 }));
      // Heartbeats already committed a 200, so the timeout can only abort the response.
      expect(res.status).toBe(200);
      expect(res.complete).toBe(false);
      expect(ndjsonItems(res.body)).toEqual([]);
      // Why, for a client that can read it: the last line before the reset.
      expect(streamError(res.body)).toEqual({
        code: 'COMMAND_TIMEOUT',
        error: expect.stringMatching(/no progress for 400 ms \(REQUEST_TIMEOUT_MS\)/),
      });
      await h.runner.waitFor((e) => e[before]?.cancelled === true);
    });
  });

  describe('request timeout before the first byte', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(mode, { REQUEST_TIMEOUT_MS: '300' });
    });
    afterAll(async () => {
      await h.close();
    });

    it('answers 504 JSON when the command shows no progress within REQUEST_TIMEOUT_MS', async () => {
      const before = h.runner.count;
      const res = await post(`${h.base}/proxy`, commandBody({ items: 1, delayBeforeFirstMs: 5000 }));
      expect(res.status).toBe(504);
      expect(JSON.parse(res.body).error).toMatch(/REQUEST_TIMEOUT_MS/);
      await h.runner.waitFor((e) => e[before]?.cancelled === true);
    });

    it('never cuts off a command that keeps reporting progress', async () => {
      const res = await post(
        `${h.base}/proxy`,
        commandBody({ items: 1, delayBeforeFirstMs: 900, progressEveryMs: 40 }),
      );
      expect(res.status).toBe(200);
      expect(ndjsonItems(res.body)).toHaveLength(1);
    });
  });

  describe('authentication throttling', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(mode, { AUTH_MAX_FAILURES: '3', AUTH_FAILURE_WINDOW_MS: '60000' });
    });
    afterAll(async () => {
      await h.close();
    });

    it('refuses an address with 429 after repeated failures, even with the right password', async () => {
      const url = `${h.base}/proxy`;
      const wrong = commandBody();
      (wrong.config as Record<string, unknown>).proxyPassword = 'guess';
      for (let i = 0; i < 3; i++) expect((await post(url, wrong)).status).toBe(401);
      const res = await post(url, commandBody());
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(JSON.parse(res.body).error).toMatch(/too many failed proxy passwords/);
      expect(h.runner.count).toBe(0);
    });
  });

  describe('authentication throttling behind a trusted proxy (TRUST_PROXY)', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(mode, { AUTH_MAX_FAILURES: '2', TRUST_PROXY: '127.0.0.1' });
    });
    afterAll(async () => {
      await h.close();
    });

    it('counts failures per forwarded client address, so one client cannot lock out the others', async () => {
      const inject = (forwardedFor: string, password: string) =>
        h.server.app.inject({
          method: 'POST',
          url: '/proxy',
          remoteAddress: '127.0.0.1',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
          payload: JSON.stringify({
            ...commandBody({}, { type: 'std:test-connection' }),
            config: { ...(commandBody().config as object), proxyPassword: password },
          }),
        });
      expect((await inject('203.0.113.7', 'guess')).statusCode).toBe(401);
      expect((await inject('203.0.113.7', 'guess')).statusCode).toBe(401);
      expect((await inject('203.0.113.7', PASSWORD)).statusCode).toBe(429);
      const other = await inject('198.51.100.4', PASSWORD);
      expect(other.statusCode).toBe(200);
    });
  });

  describe('large output', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(mode);
    });
    afterAll(async () => {
      await h.close();
    });

    it('streams 50k items (20 MB) to a slow reader with a bounded backlog', async () => {
      let maxXlen = 0;
      let polling = mode === 'queue';
      const poller = (async () => {
        while (polling) {
          const keys = await h.redis!.keys(`fusion:${h.env.QUEUE_NAME}:*:out`);
          for (const k of keys) maxXlen = Math.max(maxXlen, await h.redis!.xlen(k));
          await delay(5);
        }
      })();
      // The reader stops at the first chunk and resumes only once a backlog has formed (in Redis,
      // or in the embedded channel): no clock decides it, so a loaded machine only makes it slower.
      let backlogFormed: () => void = () => undefined;
      const formed = new Promise<void>((r) => (backlogFormed = r));
      const backlog = (): boolean =>
        mode === 'queue' ? maxXlen >= 8 : (h.server.dispatcher as EmbeddedDispatcher).maxBacklogSeen > 64 * 1024;
      const watch = (async () => {
        while (!backlog()) await delay(5);
        backlogFormed();
      })();
      let paused = false;
      const res = await post(`${h.base}/proxy`, commandBody({ items: 50_000, itemBytes: 400 }), {
        onChunk: (_s, _req, r) => {
          if (paused) return;
          paused = true;
          r.pause();
          void formed.then(() => r.resume());
        },
      });
      await watch;
      polling = false;
      await poller;
      expect(res.status).toBe(200);
      expect(res.complete).toBe(true);
      const items = ndjsonItems(res.body) as Array<{ i: number }>;
      expect(items).toHaveLength(50_000);
      expect(items[49_999]!.i).toBe(49_999);
      if (mode === 'queue') {
        expect(maxXlen).toBeGreaterThanOrEqual(8);
        // Writer bound (32 unread entries of <= 64 KiB) plus the chunk in flight.
        expect(maxXlen).toBeLessThanOrEqual(34);
      } else {
        const d = h.server.dispatcher as EmbeddedDispatcher;
        expect(d.maxBacklogSeen).toBeGreaterThan(64 * 1024);
        expect(d.maxBacklogSeen).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
      }
    });
  });

  describe('graceful shutdown', () => {
    it('finishes an open stream after close() and then refuses connections', async () => {
      const h = await startHarness(mode);
      const url = `${h.base}/proxy`;
      const pending = post(url, commandBody({ items: 10, delayBetweenMs: 30 }));
      await h.runner.waitFor((e) => e.length === 1 && e[0]!.emitted > 0);
      await h.close();
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.complete).toBe(true);
      expect(ndjsonItems(res.body)).toHaveLength(10);
      // A new connection, not one the client's agent kept alive from before.
      await expect(rawRequest(url, commandBody(), '1.1')).rejects.toThrow(/ECONNREFUSED/);
    });
  });
});
