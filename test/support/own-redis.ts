import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port';
import { redisPing } from './redis-ping';
import { scaled } from './time-factor';

/** A redis-server of the test's own (no persistence) that it may kill and start again on the same port. */
export interface OwnRedis {
  url: string;
  port: number;
  /** The running redis-server's process id (a bench measures its CPU); undefined while stopped. */
  readonly pid: number | undefined;
  /** SIGKILL: what a crashed or evicted Redis looks like to its clients. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (no persistence), and waits for PING. */
  start(): Promise<void>;
  /** SIGSTOP: a Redis that stops answering without closing any connection (a frozen node, a stuck fork). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  stop(): Promise<void>;
}

export function redisServerBinary(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const bin = found.stdout.trim();
  return found.status === 0 && bin ? bin : undefined;
}

export async function waitForPing(url: string, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (await redisPing(url, 300)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** Spawns redis-server from PATH on a free loopback port; throws with install instructions when there is none. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const bin = redisServerBinary();
  if (!bin)
    throw new Error(
      'redis-server is not on PATH (Debian/Ubuntu: apt-get install -y redis-server); .ci/run installs it',
    );
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fusion-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const killNow = (): void => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killNow);
  const own: OwnRedis = {
    url,
    port,
    get pid() {
      return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    async start() {
      child = spawn(
        bin,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        { stdio: 'ignore' },
      );
      if (!(await waitForPing(url, scaled(5000)))) {
        killNow();
        throw new Error(`redis-server from ${bin} did not answer PING on port ${port} within ${scaled(5000) / 1000} s`);
      }
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGKILL');
      await exited;
    },
    async stop() {
      await own.kill();
      process.off('exit', killNow);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await own.start();
  return own;
}
