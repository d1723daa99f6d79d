/**
 * Every process a test starts is stopped on every path, a failed start included, and the run
 * would notice one that is not (global-teardown.ts fails `npm test` on a process left running).
 */
import { spawn } from 'node:child_process';
import { Cluster } from '../chaos/cluster';
import { freePort } from './free-port';
import { Proc } from './serve-process';
import { processesLeft } from './test-run';

const mine = (): string[] => processesLeft(expect.getState().testPath).map((p) => p.command);

function running(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('process hygiene', () => {
  it('a process a test starts carries the mark the end-of-run check looks for, grandchildren and a bare environment included', async () => {
    const child = spawn('sh', ['-c', 'sleep 300 & wait'], { env: { PATH: process.env.PATH ?? '' }, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      // The shell, then the sleep it started (the check reads /proc: wait for the fork).
      for (let i = 0; mine().filter((c) => c.startsWith('sleep 300')).length === 0; i++) {
        if (i > 200) throw new Error(`the grandchild was never seen: ${JSON.stringify(mine())}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(mine()).toEqual(expect.arrayContaining(['sh -c sleep 300 & wait', 'sleep 300']));
      expect(processesLeft().find((p) => p.pid === child.pid)?.file).toBe('test/support/process-hygiene.test.ts');
    } finally {
      // Killing the process group: the shell and its sleep.
      const sleeps = processesLeft(expect.getState().testPath).map((p) => p.pid);
      for (const pid of sleeps) process.kill(pid, 'SIGKILL');
      await exited;
    }
    for (let i = 0; mine().length > 0; i++) {
      if (i > 200) throw new Error(`left: ${JSON.stringify(mine())}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  });

  it('a server that is never ready is killed before Proc.start rejects', async () => {
    // A worker whose Redis does not answer stays up and unready (its /readyz says 503).
    const proc = new Proc(
      'unready',
      'worker',
      await freePort(),
      { ROLE: 'worker', REDIS_URL: `redis://127.0.0.1:${await freePort()}`, JOB_ENCRYPTION_KEY: 'c'.repeat(64) },
      2000,
    );
    await expect(proc.start()).rejects.toThrow(/unready not ready within/);
    expect(proc.pid).toBeDefined();
    expect(proc.alive).toBe(false);
    expect(running(proc.pid)).toBe(false);
    expect(mine()).toEqual([]);
  });

  it('a cluster whose servers fail to start leaves no process behind (its Redis included)', async () => {
    // An invalid log level: every server exits at start, after the cluster's Redis is up.
    await expect(
      Cluster.start({ identities: 10, accountsPerSource: 10, env: { LOG_LEVEL: 'verbose' } }),
    ).rejects.toThrow(/exited at start/);
    expect(mine()).toEqual([]);
  });
});
