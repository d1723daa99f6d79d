import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from './free-port';

/**
 * A connection of the bench's own. An ioredis connection without an 'error' listener prints a
 * stack trace for every reconnect attempt once its Redis goes away (at the end of a run, when a
 * child is killed): a bench's output must stay its figures.
 */
export function benchConnection(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, options);
  redis.on('error', () => undefined);
  return redis;
}

/**
 * A redis-server of the bench's own on a free port, without persistence, once it answers a PING.
 * The caller kills `child` and removes `dir` when done.
 */
export async function spawnRedis(): Promise<{ url: string; child: ChildProcess; dir: string }> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    const r = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    r.on('error', () => undefined);
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      return { url, child, dir };
    } catch {
      r.disconnect();
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  throw new Error('redis-server did not start');
}
