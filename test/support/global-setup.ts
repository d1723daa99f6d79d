import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port';
import { redisPing } from './redis-ping';

/**
 * Provides a real Redis for the whole test run, in this order: REDIS_URL, a redis-server
 * spawned from PATH on a free port without persistence, a testcontainers Redis when a Docker
 * engine answers. Otherwise the run fails with instructions; tests are never skipped.
 */
declare global {
  // eslint-disable-next-line no-var
  var __fusionRedis: { child?: ChildProcess; stop?: () => Promise<void> } | undefined;
}


async function waitForPing(url: string, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (await redisPing(url, 300)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

async function spawnRedisServer(): Promise<string | undefined> {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const bin = found.stdout.trim();
  if (found.status !== 0 || !bin) return undefined;
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fusion-redis-'));
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const kill = (): void => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.on('exit', kill);
  const url = `redis://127.0.0.1:${port}`;
  if (!(await waitForPing(url, 5000))) {
    kill();
    throw new Error(`redis-server from ${bin} did not answer PING on port ${port} within 5 s`);
  }
  globalThis.__fusionRedis = {
    child,
    stop: async () => {
      kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return url;
}

async function startContainer(): Promise<{ url?: string; why: string }> {
  try {
    const mod = await import('@testcontainers/redis');
    const container = await new mod.RedisContainer('redis:7-alpine').start();
    globalThis.__fusionRedis = { stop: async () => void (await container.stop()) };
    return { url: container.getConnectionUrl(), why: '' };
  } catch (e) {
    return { why: (e as Error).message };
  }
}

export default async function globalSetup(): Promise<void> {
  const given = process.env.REDIS_URL;
  if (given) {
    if (!(await waitForPing(given, 3000))) {
      throw new Error(`REDIS_URL=${given.replace(/\/\/[^@]*@/, '//***@')} does not answer PING`);
    }
    return;
  }
  const spawned = await spawnRedisServer();
  if (spawned) {
    process.env.REDIS_URL = spawned;
    return;
  }
  const container = await startContainer();
  if (container.url) {
    process.env.REDIS_URL = container.url;
    return;
  }
  throw new Error(
    'No Redis for tests. Set REDIS_URL, or install redis-server (Debian/Ubuntu: apt-get install -y redis-server), ' +
      `or run a Docker engine. Tried: no redis-server on PATH; testcontainers: ${container.why}`,
  );
}
