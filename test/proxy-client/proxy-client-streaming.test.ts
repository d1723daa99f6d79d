import v8 from 'node:v8';
import vm from 'node:vm';
import { invokeProxy, proxyItems, type ProxyItem, type ProxyRequestOptions } from '../../src/proxy-client';
import { startFakeProxyServer, writeChunk, type TestServer } from '../support/fake-proxy-server';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function options(url: string): ProxyRequestOptions {
  return {
    url,
    password: 'streaming-test-password',
    type: 'std:account:list',
    input: {},
    config: {},
    timeouts: { idleMs: 10_000 },
  };
}

/** A promise with its resolver, so the server can wait for the client's callback. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('proxy client streams items before the response ends', () => {
  it.each([
    ['NDJSON', 'application/x-ndjson', (i: number) => `{"n":${i}}\n`, '', ''],
    ['JSON array', 'application/json', (i: number) => `${i === 1 ? '' : ','}{"n":${i}}`, '[', ']'],
  ])(
    '%s: the server writes item 1, waits until the callback has it, then writes the rest',
    async (_name, ct, line, open, close) => {
      const firstSeen = signal();
      let serverWaited = false;
      const s = await startFakeProxyServer(async (_req, res) => {
        res.writeHead(200, { 'content-type': ct });
        await writeChunk(res, open + line(1));
        await firstSeen.promise; // would hang (and time out) if the client buffered the whole body
        serverWaited = true;
        await writeChunk(res, line(2) + line(3));
        res.end(close);
      });
      servers.push(s);
      const seen: ProxyItem[] = [];
      const result = await invokeProxy(options(s.url), (item) => {
        seen.push(item);
        if (item.n === 1) {
          expect(serverWaited).toBe(false);
          firstSeen.resolve();
        }
      });
      expect(seen).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(result.items).toBe(3);
      expect(serverWaited).toBe(true);
    },
  );

  it('awaits an async callback before handing over the next item (backpressure)', async () => {
    const s = await startFakeProxyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(Array.from({ length: 50 }, (_, i) => `{"n":${i}}\n`).join(''));
    });
    servers.push(s);
    let inFlight = 0;
    let maxInFlight = 0;
    const seen: number[] = [];
    await invokeProxy(options(s.url), async (item) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setImmediate(r));
      seen.push(item.n as number);
      inFlight -= 1;
    });
    expect(maxInFlight).toBe(1);
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('the async-iterable variant yields items and returns the counts', async () => {
    const body = '[{"n":1},{"n":2}]';
    const s = await startFakeProxyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    servers.push(s);
    const it = proxyItems(options(s.url));
    const seen: ProxyItem[] = [];
    let next = await it.next();
    while (!next.done) {
      seen.push(next.value);
      next = await it.next();
    }
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
    expect(next.value).toEqual({ items: 2, bytes: body.length });
  });
});

describe('proxy client memory stays flat whatever the response size', () => {
  // Only a hang guard: 100 MB through a forced GC every 5,000 items (now 10,000) took over 60 s on a 2-core
  // machine at load average 12 (CI's own contention run plus other work).
  const HANG_GUARD_MS = 300_000;
  // Retained memory, measured after a forced collection: garbage the collector has not reached
  // yet (its timing depends on machine load) must not count, what the client keeps must.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  function footprint(): number {
    gc();
    const m = process.memoryUsage();
    // Buffers live outside the JS heap: count both, or a buffering client would go unseen.
    return m.heapUsed + m.arrayBuffers;
  }

  async function streamAndMeasure(
    format: 'ndjson' | 'array',
    totalBytes: number,
  ): Promise<{ items: number; bytes: number; growth: number }> {
    const filler = 'x'.repeat(900);
    const s = await startFakeProxyServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': format === 'ndjson' ? 'application/x-ndjson' : 'application/json' });
      let sent = 0;
      let i = 0;
      if (format === 'array') await writeChunk(res, '[');
      while (sent < totalBytes) {
        // ~64 KB per write, generated on the fly: the server never holds the body either.
        const lines: string[] = [];
        for (let k = 0; k < 64; k++, i++) {
          const item = JSON.stringify({ key: { simple: { id: `u${i}` } }, attributes: { i, filler } });
          lines.push(format === 'ndjson' ? `${item}\n` : `${i === 0 ? '' : ','}${item}`);
        }
        const chunk = lines.join('');
        sent += chunk.length;
        await writeChunk(res, chunk);
      }
      res.end(format === 'array' ? ']' : '');
    });
    servers.push(s);
    const before = footprint();
    let peak = before;
    let count = 0;
    const result = await invokeProxy(options(s.url), (item) => {
      count += 1;
      if ((item.attributes as { i: number }).i !== count - 1) throw new Error(`out of order at ${count}`);
      // A forced collection every 10,000 items (about 10 MB of body): what a client keeps grows with
      // the items, so it passes the 16 MB bound by the second sample. Each collection walks the whole
      // worker heap, which after other files is large: every 5,000 spent most of this file's time.
      if (count % 10_000 === 0) peak = Math.max(peak, footprint());
    });
    expect(result.items).toBe(count);
    return { items: count, bytes: result.bytes, growth: peak - before };
  }

  it(
    '100 MB of NDJSON: every item arrives in order, memory growth stays far below the body size',
    async () => {
      const r = await streamAndMeasure('ndjson', 100 * 1024 * 1024);
      expect(r.bytes).toBeGreaterThanOrEqual(100 * 1024 * 1024);
      expect(r.items).toBeGreaterThan(100_000);
      // A client that kept the items (or the body) would retain > 100 MB.
      expect(r.growth).toBeLessThan(16 * 1024 * 1024);
    },
    HANG_GUARD_MS,
  );

  it(
    '40 MB JSON array: same, through the incremental array tokenizer',
    async () => {
      const r = await streamAndMeasure('array', 40 * 1024 * 1024);
      expect(r.bytes).toBeGreaterThanOrEqual(40 * 1024 * 1024);
      expect(r.growth).toBeLessThan(16 * 1024 * 1024);
    },
    HANG_GUARD_MS,
  );

  it(
    'the measurement sees a client that keeps what it receives (so the bounds above can fail)',
    async () => {
      const kept: ProxyItem[] = [];
      const before = footprint();
      const s = await startFakeProxyServer(async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        for (let i = 0; i < 40_000; i++) res.write(`${JSON.stringify({ i, filler: 'y'.repeat(900) })}\n`);
        res.end();
      });
      servers.push(s);
      await invokeProxy(options(s.url), (item) => void kept.push(item));
      expect(footprint() - before).toBeGreaterThan(16 * 1024 * 1024);
      expect(kept).toHaveLength(40_000);
    },
    HANG_GUARD_MS,
  );
});
