import { FusionError } from '../../src/core/errors';
import type { OutputChunk } from '../../src/dispatch/command-dispatcher';
import { InMemoryChannel } from '../../src/dispatch/in-memory-channel';
import { LineBatcher } from '../../src/dispatch/line-batcher';
import { HEARTBEAT_CHUNK, firstHeartbeatDelay, withHeartbeat } from '../../src/server/heartbeat';
import { AuthThrottle } from '../../src/server/auth-throttle';

describe('LineBatcher', () => {
  it('emits whole lines grouped by size, and the rest on flush', () => {
    const out: Array<[string, number]> = [];
    const b = new LineBatcher({ maxBytes: 10, lingerMs: 1000 }, (d, n) => out.push([d, n]));
    b.add('aaaa');
    b.add('bbbb');
    expect(out).toEqual([['aaaa\nbbbb\n', 2]]);
    b.add('c');
    b.flush();
    expect(out[1]).toEqual(['c\n', 1]);
    b.dispose();
  });
});

describe('InMemoryChannel', () => {
  it('makes the producer wait while the unread backlog is above the bound', async () => {
    const ch = new InMemoryChannel({ chunkBytes: 100, maxBacklogBytes: 300 });
    let writes = 0;
    let blocked = false;
    const producer = (async () => {
      for (let i = 0; i < 100; i++) {
        const w = ch.write('x'.repeat(49));
        writes += 1;
        if (w) {
          blocked = true;
          await w;
        }
      }
      await ch.end();
    })();
    await new Promise((r) => setTimeout(r, 50));
    expect(blocked).toBe(true);
    expect(writes).toBeLessThan(20);
    let items = 0;
    for await (const c of ch.read(new AbortController().signal, 1000)) items += c.items;
    await producer;
    expect(items).toBe(100);
    expect(ch.maxBacklogSeen).toBeLessThanOrEqual(400);
  });

  it('throws the producer error to the reader after the output before it', async () => {
    const ch = new InMemoryChannel({ chunkBytes: 1000, maxBacklogBytes: 10_000 });
    ch.write('{"a":1}');
    await ch.fail(new FusionError('AGGREGATION_FAILED', 'boom'));
    const got: OutputChunk[] = [];
    await expect(
      (async () => {
        for await (const c of ch.read(new AbortController().signal, 1000)) got.push(c);
      })(),
    ).rejects.toThrow('boom');
    expect(got).toEqual([{ data: '{"a":1}\n', items: 1 }]);
  });

  it('fails a blocked producer when the reader goes away', async () => {
    const ch = new InMemoryChannel({ chunkBytes: 10, maxBacklogBytes: 10 });
    const w = ch.write('x'.repeat(30));
    expect(w).toBeDefined();
    ch.close();
    await expect(w).rejects.toMatchObject({ code: 'COMMAND_CANCELLED' });
  });
});

describe('withHeartbeat', () => {
  it('inserts blank lines only while the source is silent', async () => {
    async function* slow(): AsyncGenerator<OutputChunk> {
      yield { data: '{"i":0}\n', items: 1 };
      await new Promise((r) => setTimeout(r, 400));
      yield { data: '{"i":1}\n', items: 1 };
    }
    const out: OutputChunk[] = [];
    for await (const c of withHeartbeat(slow(), 30)) out.push(c);
    expect(out[0]!.items).toBe(1);
    expect(out[out.length - 1]!.items).toBe(1);
    const beats = out.filter((c) => c === HEARTBEAT_CHUNK).length;
    expect(beats).toBeGreaterThanOrEqual(2);
  });
});

describe('the first heartbeat waits, so an early failure still gets its JSON error', () => {
  afterEach(() => jest.useRealTimers());

  it("waits twice the interval before the first byte, at most the contract's 30 s", () => {
    expect(firstHeartbeatDelay(15_000)).toBe(30_000); // the default
    expect(firstHeartbeatDelay(30_000)).toBe(30_000);
    expect(firstHeartbeatDelay(5_000)).toBe(10_000);
    expect(firstHeartbeatDelay(10)).toBe(20);
  });

  it('at the default interval, a command failing after a heartbeat was due fails before any byte', async () => {
    jest.useFakeTimers();
    let fail: (e: Error) => void = () => undefined;
    const failing = new Promise<never>((_resolve, reject) => (fail = reject));
    const source: AsyncIterable<OutputChunk> = { [Symbol.asyncIterator]: () => ({ next: () => failing }) };
    const hb = withHeartbeat(source, 15_000);
    const first = hb.next();
    let settled = false;
    void first.then(
      () => (settled = true),
      () => (settled = true),
    );
    await jest.advanceTimersByTimeAsync(20_000); // past the interval: a heartbeat was due
    expect(settled).toBe(false);
    fail(new Error('wrong Platform API URL'));
    await expect(first).rejects.toThrow('wrong Platform API URL');
  });

  it('a silent command gets its first heartbeat at twice the interval, then one per interval', async () => {
    jest.useFakeTimers();
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    async function* source(): AsyncGenerator<OutputChunk> {
      await finished;
      yield { data: '{"i":0}\n', items: 1 };
    }
    const hb = withHeartbeat(source(), 15_000);
    const beats: OutputChunk[] = [];
    const reading = (async () => {
      for await (const c of hb) beats.push(c);
    })();
    await jest.advanceTimersByTimeAsync(29_999);
    expect(beats).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(beats).toEqual([HEARTBEAT_CHUNK]);
    await jest.advanceTimersByTimeAsync(15_000);
    expect(beats).toEqual([HEARTBEAT_CHUNK, HEARTBEAT_CHUNK]);
    finish();
    await reading;
    expect(beats.at(-1)!.items).toBe(1);
  });
});

describe('AuthThrottle', () => {
  it('refuses an address past the limit until its window ends', () => {
    let now = 0;
    const t = new AuthThrottle(2, 1000, 10, () => now);
    t.recordFailure('a');
    expect(t.retryAfterMs('a')).toBe(0);
    t.recordFailure('a');
    expect(t.retryAfterMs('a')).toBe(1000);
    expect(t.retryAfterMs('b')).toBe(0);
    now = 1000;
    expect(t.retryAfterMs('a')).toBe(0);
  });
});
