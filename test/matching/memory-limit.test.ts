/** The matching threads a container's memory limit allows, read from its cgroup (v2 and v1). */
import { cgroupMemoryLimit } from '../../src/core/matching/parallel/memory-limit';
import {
  defaultParallelism,
  PLANNED_SHARE,
  THREAD_COST,
  threadCopiesAllowed,
  threadsCappedMessage,
} from '../../src/core/matching/parallel/parallelism';
import { cgroup, removeCgroups } from './support/cgroup';

afterAll(removeCgroups);

const GiB = 2 ** 30;

describe('cgroup memory limit', () => {
  it('v2: bytes; "max" is no limit', () => {
    expect(cgroupMemoryLimit(cgroup({ 'memory.max': String(GiB) }))).toBe(GiB);
    expect(cgroupMemoryLimit(cgroup({ 'memory.max': 'max' }))).toBeUndefined();
  });

  it('v1: bytes; the page-rounded 2^63 - 1 it reports without a limit is none', () => {
    expect(cgroupMemoryLimit(cgroup({ 'memory/memory.limit_in_bytes': String(2 * GiB) }))).toBe(2 * GiB);
    expect(cgroupMemoryLimit(cgroup({ 'memory/memory.limit_in_bytes': '9223372036854771712' }))).toBeUndefined();
  });

  it('no cgroup files or garbage: no limit', () => {
    expect(cgroupMemoryLimit(cgroup({}))).toBeUndefined();
    expect(cgroupMemoryLimit(cgroup({ 'memory.max': 'lots' }))).toBeUndefined();
    expect(cgroupMemoryLimit(cgroup({ 'memory.max': '0' }))).toBeUndefined();
  });

  it('the default parallelism carries the limit, and none without one', () => {
    expect(defaultParallelism(2, GiB)).toMatchObject({ threads: expect.any(Number), memoryLimit: GiB });
    expect(defaultParallelism(2, undefined)).not.toHaveProperty('memoryLimit');
  });
});

describe('threads a memory limit allows', () => {
  it('fewer copies as the records grow, none once the run alone fills the plan, never negative', () => {
    let last = Number.POSITIVE_INFINITY;
    for (const records of [1_000, 20_000, 50_000, 100_000, 150_000, 200_000, 300_000, 1_000_000]) {
      const n = threadCopiesAllowed(records, GiB);
      expect(n).toBeLessThanOrEqual(last);
      expect(n).toBeGreaterThanOrEqual(0);
      last = n;
    }
    expect(threadCopiesAllowed(1_000_000, GiB)).toBe(0);
    expect(threadCopiesAllowed(1_000_000, 16 * GiB)).toBeGreaterThan(0);
  });

  it('the copies allowed and the run fit the planned share; one more copy would not', () => {
    const { perRecord, fixed, ownerPerRecord } = THREAD_COST;
    for (const [records, limit] of [
      [20_000, GiB],
      [50_000, GiB],
      [150_000, 2 * GiB],
      [400_000, 8 * GiB],
    ] as const) {
      const n = threadCopiesAllowed(records, limit);
      expect(n).toBeGreaterThan(0);
      const bytes = (copies: number): number => records * ownerPerRecord + copies * (records * perRecord + fixed);
      expect(bytes(n)).toBeLessThanOrEqual(limit * PLANNED_SHARE);
      expect(bytes(n + 1)).toBeGreaterThan(limit * PLANNED_SHARE);
    }
  });

  it("at the chart's default worker limit (1 GiB) a node's 16 cores are not what decides", () => {
    expect(threadCopiesAllowed(20_000, GiB)).toBeLessThan(15);
    expect(threadCopiesAllowed(100_000, GiB)).toBeLessThan(5);
    expect(threadCopiesAllowed(300_000, GiB)).toBe(0);
  });

  it('the warning names the threads, the records, each copy and the limit', () => {
    const msg = threadsCappedMessage({
      threads: 2,
      wanted: 16,
      records: 150_000,
      memoryLimit: GiB,
      threadBytes: 214 * 2 ** 20,
    });
    expect(msg).toContain('Matching uses 2 thread(s) instead of 16');
    expect(msg).toContain('the 150,000 records');
    expect(msg).toContain('about 214 MiB each');
    expect(msg).toContain('may use 1,024 MiB');
  });
});
