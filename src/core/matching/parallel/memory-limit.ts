/**
 * The memory limit of the container the process runs in, from its cgroup. Matching threads each
 * hold their own prepared copy of the records: the limit, not the node's cores, bounds how many of
 * them a pod can hold (see threadCopiesAllowed in parallelism.ts).
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

/** cgroup v1 reports "no limit" as a page-rounded 2^63 - 1; anything from 2^60 on is taken as none. */
const NO_LIMIT_FROM = 2 ** 60;

/** Bytes the cgroup allows, or undefined when there is no limit or no cgroup. */
export function cgroupMemoryLimit(root = '/sys/fs/cgroup'): number | undefined {
  // cgroup v2: "max" (no limit) or bytes; v1: bytes.
  const raw = read(join(root, 'memory.max')) ?? read(join(root, 'memory', 'memory.limit_in_bytes'));
  if (raw === undefined || raw === 'max' || !/^\d+$/.test(raw)) return undefined;
  const bytes = Number(raw);
  return bytes > 0 && bytes < NO_LIMIT_FROM ? bytes : undefined;
}
