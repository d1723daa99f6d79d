/** The matching threads follow a container's CPU limit, read from its cgroup (v2 and v1). */
import { availableParallelism } from 'node:os';
import { cgroupCpuLimit } from '../../src/core/matching/parallel/cpu-limit';
import { defaultParallelism } from '../../src/core/matching/parallel/parallelism';
import { cgroup, removeCgroups } from './support/cgroup';

afterAll(removeCgroups);

describe('cgroup CPU limit', () => {
  it('v2: whole CPUs of quota/period, at least one; "max" is no limit', () => {
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': '200000 100000' }))).toBe(2);
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': '150000 100000' }))).toBe(1);
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': '50000 100000' }))).toBe(1);
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': 'max 100000' }))).toBeUndefined();
  });

  it('v1: cfs quota and period; -1 is no limit', () => {
    expect(cgroupCpuLimit(cgroup({ 'cpu/cpu.cfs_quota_us': '400000', 'cpu/cpu.cfs_period_us': '100000' }))).toBe(4);
    expect(cgroupCpuLimit(cgroup({ 'cpu/cpu.cfs_quota_us': '-1', 'cpu/cpu.cfs_period_us': '100000' }))).toBeUndefined();
  });

  it('no cgroup files or garbage: no limit', () => {
    expect(cgroupCpuLimit(cgroup({}))).toBeUndefined();
    expect(cgroupCpuLimit(cgroup({ 'cpu.max': 'lots' }))).toBeUndefined();
  });

  it('the default threads are the cores, capped by the limit', () => {
    expect(defaultParallelism(undefined).threads).toBe(availableParallelism());
    expect(defaultParallelism(1).threads).toBe(1);
    expect(defaultParallelism(10_000).threads).toBe(availableParallelism());
  });
});
