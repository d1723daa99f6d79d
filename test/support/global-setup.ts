import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { redisServerBinary, startOwnRedis, waitForPing } from './own-redis';
import { setTestRunDir } from './test-run';
import { scaled } from './time-factor';

/**
 * Provides a real Redis for the whole test run, in this order: REDIS_URL, a redis-server
 * spawned from PATH on a free port without persistence, a testcontainers Redis when a Docker
 * engine answers. Otherwise the run fails with instructions; tests are never skipped.
 */
declare global {
  var __fusionRedis: { child?: ChildProcess; stop?: () => Promise<void> } | undefined;
}

async function spawnRedisServer(): Promise<string | undefined> {
  if (!redisServerBinary()) return undefined;
  const own = await startOwnRedis();
  globalThis.__fusionRedis = { stop: () => own.stop() };
  return own.url;
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
  // The run's folder and the mark on every process a test starts (test-run.ts; checked in global-teardown.ts).
  setTestRunDir(mkdtempSync(path.join(tmpdir(), 'fusion-test-run-')));
  const given = process.env.REDIS_URL;
  if (given) {
    if (!(await waitForPing(given, scaled(3000)))) {
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
