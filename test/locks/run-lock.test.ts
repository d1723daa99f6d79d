import type { Redis } from 'ioredis';
import { CREATE_TOKEN_PREFIX, holdRunLock, type RunLock } from '../../src/core/ports/run-lock';
import { MemoryRunLock } from '../../src/locks/memory-run-lock';
import { RedisRunLock } from '../../src/locks/redis-run-lock';
import { openRedis, uniquePrefix } from '../support/redis';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redis: Redis;
beforeAll(() => {
  redis = openRedis();
});
afterAll(async () => {
  await redis.quit();
});

const implementations: [string, () => RunLock][] = [
  ['memory', () => new MemoryRunLock()],
  ['redis', () => new RedisRunLock(redis, `${uniquePrefix('lock')}:`)],
];

describe.each(implementations)('%s run lock', (_name, make) => {
  test('scope: the same id every time from one lock', async () => {
    const lock = make();
    const scope = await lock.scope();
    expect(scope).toMatch(/^(memory|redis):[0-9a-f-]{36}$/);
    expect(await lock.scope()).toBe(scope);
  });

  test('one holder at a time; only the holder releases', async () => {
    const lock = make();
    expect(await lock.acquire('src-1', 'run-a', 10_000)).toBe(true);
    expect(await lock.acquire('src-1', 'run-b', 10_000)).toBe(false);
    expect(await lock.acquire('src-2', 'run-b', 10_000)).toBe(true);
    expect(await lock.release('src-1', 'run-b')).toBe(false);
    expect(await lock.acquire('src-1', 'run-b', 10_000)).toBe(false);
    expect(await lock.release('src-1', 'run-a')).toBe(true);
    expect(await lock.acquire('src-1', 'run-b', 10_000)).toBe(true);
  });

  test('an unrenewed lock expires; the old holder can then neither renew nor release it', async () => {
    const lock = make();
    expect(await lock.acquire('k', 'old', 50)).toBe(true);
    await sleep(80);
    expect(await lock.acquire('k', 'new', 10_000)).toBe(true);
    expect(await lock.renew('k', 'old', 10_000)).toBe(false);
    expect(await lock.release('k', 'old')).toBe(false);
    expect(await lock.release('k', 'new')).toBe(true);
  });

  test('renewal keeps a held lock alive past its TTL', async () => {
    const lock = make();
    const held = await holdRunLock(lock, 'renewed', 'run-1', { ttlMs: 400, renewEveryMs: 50 });
    expect(held).toBeDefined();
    await sleep(900);
    expect(await lock.acquire('renewed', 'run-2', 10_000)).toBe(false);
    expect(held?.lost).toBe(false);
    await held?.release();
    expect(await lock.acquire('renewed', 'run-2', 10_000)).toBe(true);
  });

  test('an on-demand renewal tells a held lock from a stolen one, without waiting for the timer', async () => {
    const lock = make();
    let lostCalls = 0;
    const held = (await holdRunLock(lock, 'now', 'me', {
      ttlMs: 10_000,
      renewEveryMs: 60_000,
      onLost: () => lostCalls++,
    }))!;
    expect(await held.renew()).toBe(true);
    expect(held.lost).toBe(false);
    await lock.release('now', 'me');
    await lock.acquire('now', 'thief', 10_000);
    expect(await held.renew()).toBe(false);
    expect(await held.renew()).toBe(false);
    expect(held.lost).toBe(true);
    expect(lostCalls).toBe(1);
    await held.release();
    expect(await lock.holder('now')).toBe('thief');
  });

  test('holdRunLock reports a busy lock and a lost lock', async () => {
    const lock = make();
    await lock.acquire('busy', 'other', 10_000);
    expect(await holdRunLock(lock, 'busy', 'me', { ttlMs: 1000 })).toBeUndefined();
    let lostCalled = false;
    const held = await holdRunLock(lock, 'stolen', 'me', {
      ttlMs: 40,
      renewEveryMs: 100,
      onLost: () => (lostCalled = true),
    });
    await lock.release('stolen', 'me');
    await lock.acquire('stolen', 'thief', 10_000);
    await sleep(250);
    expect(lostCalled).toBe(true);
    expect(held?.lost).toBe(true);
    await held?.release();
    // Releasing after the loss must not free the thief's lock.
    expect(await lock.acquire('stolen', 'x', 10)).toBe(false);
  });

  test('holder names the token; holdRunLock waits for a short create holder, not for another run', async () => {
    const lock = make();
    expect(await lock.holder('h')).toBeUndefined();
    await lock.acquire('h', 'run-a', 10_000);
    expect(await lock.holder('h')).toBe('run-a');
    expect(await holdRunLock(lock, 'h', 'run-b', { ttlMs: 1000, createWaitMs: 2000 })).toBeUndefined();
    await lock.release('h', 'run-a');

    const create = `${CREATE_TOKEN_PREFIX}1`;
    await lock.acquire('h', create, 10_000);
    setTimeout(() => void lock.release('h', create), 60);
    const held = await holdRunLock(lock, 'h', 'run-b', { ttlMs: 1000, createWaitMs: 5000 });
    expect(held).toBeDefined();
    expect(await lock.holder('h')).toBe('run-b');
    await held?.release();
    // A create that keeps the lock beyond the wait still makes the run refuse.
    await lock.acquire('h', create, 10_000);
    expect(await holdRunLock(lock, 'h', 'run-c', { ttlMs: 1000, createWaitMs: 50 })).toBeUndefined();
  });

  test('holdRunLock waits up to runWaitMs for another run that is stopping, then takes the lock', async () => {
    const lock = make();
    await lock.acquire('stopping', 'run-a', 10_000);
    setTimeout(() => void lock.release('stopping', 'run-a'), 100);
    const held = await holdRunLock(lock, 'stopping', 'run-b', { ttlMs: 1000, runWaitMs: 10_000 });
    expect(held).toBeDefined();
    expect(await lock.holder('stopping')).toBe('run-b');
    await held?.release();
  });
});

describe('run-lock scope', () => {
  test("every worker on one Redis shares a scope; another process's memory lock is another scope", async () => {
    const prefix = `${uniquePrefix('scope')}:`;
    const a = await new RedisRunLock(redis, prefix).scope();
    expect(await new RedisRunLock(redis, prefix).scope()).toBe(a);
    expect(await new RedisRunLock(redis, `${uniquePrefix('scope')}:`).scope()).not.toBe(a);
    expect(await new MemoryRunLock().scope()).not.toBe(await new MemoryRunLock().scope());
  });

  test('after a Redis wipe every worker agrees on the new scope', async () => {
    const prefix = `${uniquePrefix('scope')}:`;
    const [a, b] = [new RedisRunLock(redis, prefix), new RedisRunLock(redis, prefix)];
    const before = await a.scope();
    await redis.del(`${prefix.replace(/:$/, '')}-scope`);
    const after = await b.scope();
    expect(after).not.toBe(before);
    expect(await a.scope()).toBe(after);
  });
});
