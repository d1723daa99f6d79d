/**
 * Processes of the scale-out benches: the CPU a process has used (to count every process a run
 * involves, not only this one), and a spawned worker process serving matching child jobs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const TICKS = 100; // USER_HZ of /proc/<pid>/stat on Linux

/** CPU seconds a process has used (user + system), from /proc; 0 once it is gone. */
export function procCpu(pid: number): number {
  return statCpu(`/proc/${pid}/stat`);
}

/**
 * CPU seconds this process's main thread has used (its task's stat: on Linux the main thread's id is
 * the process id), without its worker threads; Node 20 has no per-thread CPU clock of its own.
 */
export function mainThreadCpu(): number {
  return statCpu(`/proc/self/task/${process.pid}/stat`);
}

function statCpu(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** Peak resident memory of a process (VmHWM), MiB; 0 once it is gone. */
export function procPeakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * A worker process serving the shard queue of `prefix` (shard-worker-process.ts), or its partition
 * queue, once it is ready.
 */
export function startShardWorkerProcess(
  url: string,
  prefix: string,
  serve: 'shards' | 'partitions' = 'shards',
): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [join(__dirname, 'shard-worker-process.js')], {
    env: { ...process.env, REDIS_URL: url, BENCH_PREFIX: prefix, BENCH_SERVE: serve },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.once('data', () => resolve(proc));
    proc.once('exit', (code) => reject(new Error(`worker process exited (${String(code)})`)));
  });
}
