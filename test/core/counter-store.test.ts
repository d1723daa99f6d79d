/**
 * The counter store's writes: exact first, then ahead by as many values as issued (at most the cap), none while
 * the values issued are within the block written last, the exact values at release; a failed write changes
 * nothing the store believes the platform holds.
 */
import { CounterStore } from '../../src/core/aggregation/counter-store';

function store(reserveUpTo: number, failFirst = false) {
  const writes: Record<string, number>[] = [];
  let fail = failFirst;
  const s = new CounterStore(
    { emp: 10 },
    async (values) => {
      if (fail) {
        fail = false;
        throw new Error('platform down');
      }
      writes.push(values);
    },
    reserveUpTo,
  );
  // What the platform holds: the last write, or what the store started from.
  const held = async (): Promise<Record<string, number>> => writes.at(-1) ?? { emp: 10 };
  return { s, writes, held };
}

describe('counter store', () => {
  it('writes exact first, then ahead up to the cap, nothing while covered, exact at release', async () => {
    const { s, writes, held } = store(3);
    expect(s.next('emp', 1)).toBe(11);
    await s.flush();
    expect(s.next('emp', 1)).toBe(12);
    await s.flush();
    await s.flush();
    for (let i = 0; i < 2; i++) s.next('emp', 1);
    await s.flush(); // 14 is within 12 + 2
    s.next('emp', 1);
    await s.flush(); // 15: ahead by min(3, 5 issued)
    expect(await s.release(held)).toBe('released');
    expect(await s.release(held)).toBe('exact');
    expect(writes).toEqual([{ emp: 11 }, { emp: 14 }, { emp: 18 }, { emp: 15 }]);
    expect(s.flushCount).toBe(4);
  });

  it('a counter that starts in this run, and a second counter, are covered alike', async () => {
    const { s, writes, held } = store(1_000);
    s.next('emp', 1);
    s.next('badge', 500);
    await s.flush();
    s.next('badge', 500);
    await s.flush();
    expect(await s.release(held)).toBe('released');
    expect(writes).toEqual([
      { emp: 11, badge: 500 },
      { emp: 12, badge: 503 },
      { emp: 11, badge: 501 },
    ]);
  });

  it('without a reserve (a single create) every write is exact and release writes nothing', async () => {
    const { s, writes } = store(0);
    s.next('emp', 1);
    await s.flush();
    s.next('emp', 1);
    await s.flush();
    expect(await s.release(() => Promise.reject(new Error('not read')))).toBe('exact');
    expect(writes).toEqual([{ emp: 11 }, { emp: 12 }]);
  });

  it('the platform holds other values than its last write (a run that took over): release writes nothing', async () => {
    const { s, writes } = store(1_000);
    for (let i = 0; i < 3; i++) {
      s.next('emp', 1);
      await s.flush();
    }
    expect(writes).toEqual([{ emp: 11 }, { emp: 14 }]);
    expect(await s.release(async () => ({ emp: 1_203 }))).toBe('superseded');
    expect(await s.release(async () => ({ emp: 14, badge: 1 }))).toBe('superseded');
    expect(writes).toHaveLength(2);
    expect(await s.release(async () => ({ emp: 14 }))).toBe('released');
    expect(writes.at(-1)).toEqual({ emp: 13 });
  });

  it('a failed write: the flush fails, the next one writes what is owed (still the exact first write)', async () => {
    const { s, writes } = store(1_000, true);
    s.next('emp', 1);
    await expect(s.flush()).rejects.toThrow('platform down');
    expect(s.flushCount).toBe(0);
    await s.flush();
    expect(writes).toEqual([{ emp: 11 }]);
  });
});
