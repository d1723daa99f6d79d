/**
 * The CPU limit of the container the process runs in, from its cgroup. `os.availableParallelism()`
 * counts the node's cores, not the pod's limit: on a 64-core node a worker limited to 2 CPUs would
 * start 64 threads, each preparing its own copy of the baseline, and be throttled into running
 * them one after another.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Whole CPUs the cgroup allows (at least 1), or undefined when there is no limit or no cgroup. */
export function cgroupCpuLimit(root = '/sys/fs/cgroup'): number | undefined {
  // cgroup v2: "max 100000" (no limit) or "<quota> <period>".
  const v2 = read(join(root, 'cpu.max'));
  let quota: number;
  let period: number;
  if (v2 !== undefined) {
    const [q, p] = v2.split(/\s+/);
    if (q === 'max') return undefined;
    quota = Number(q);
    period = Number(p);
  } else {
    // cgroup v1: quota -1 means no limit.
    quota = Number(read(join(root, 'cpu', 'cpu.cfs_quota_us')) ?? NaN);
    period = Number(read(join(root, 'cpu', 'cpu.cfs_period_us')) ?? NaN);
  }
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  // 1.5 CPUs is one thread: a second would be throttled for half of every period.
  return Math.max(1, Math.floor(quota / period));
}
