/**
 * Records the CPU one test file cost, for the timing reporter (timing-reporter.js): the jest worker's
 * own (process.cpuUsage) and that of the processes it started and reaped meanwhile (cutime and cstime
 * of /proc/self/stat: servers, the CLI, redis-server). Wall time alone hides where a loaded machine's
 * cores go: a file that waits on timers is long but cheap, and one that matches 20,000 records is not.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { testRunDir } from './test-run';

/** CPU seconds of this process's reaped children; 0 where /proc is not there (not Linux). */
function childrenCpuSeconds(): number {
  try {
    // Fields after the command's closing parenthesis; cutime and cstime are fields 16 and 17 (1-based), in
    // clock ticks of USER_HZ, which /proc fixes at 100 on x86 and arm64 whatever the kernel's own HZ.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

export function recordFileCpu(testPath: string): void {
  const dir = testRunDir();
  if (!dir) return;
  const own = process.cpuUsage();
  const children = childrenCpuSeconds();
  afterAll(() => {
    const used = process.cpuUsage(own);
    const line = {
      file: testPath,
      cpu: (used.user + used.system) / 1e6,
      childCpu: childrenCpuSeconds() - children,
    };
    appendFileSync(path.join(dir, `cpu-${process.pid}.jsonl`), `${JSON.stringify(line)}\n`);
  });
}
