import { rmSync } from 'node:fs';
import { processesLeft, testRunDir } from './test-run';
import { scaled } from './time-factor';

/**
 * Stops the run's Redis, then fails the run when a process a test started is still alive (a test
 * that did not stop what it started on some path: a failed start, a timeout). A process stopped at
 * the very end may take a moment to exit: it gets a few seconds, then it is killed and named.
 */
export default async function globalTeardown(): Promise<void> {
  await globalThis.__fusionRedis?.stop?.();
  const end = Date.now() + scaled(5000);
  let left = processesLeft();
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesLeft();
  }
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const dir = testRunDir();
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (left.length > 0) {
    const list = left.map((p) => `  pid ${p.pid} from ${p.file}: ${p.command.slice(0, 200)}`).join('\n');
    throw new Error(
      `${left.length} process(es) the tests started were still running at the end (now killed):\n${list}`,
    );
  }
}
