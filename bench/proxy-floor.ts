/**
 * What a queued call cannot go below, for bench:proxy's latency goal (issue 27: queue added p50 <= 1 ms):
 * the shortest chain any Redis queue between two processes needs, with no queue library, no HTTP and no
 * command. The client LPUSHes a stream key, an echo process woken from BLPOP XADDs one entry to it,
 * and the client's XREAD BLOCK (on a connection of its own, as the api's reader) wakes: two processes,
 * two wake-ups, three commands. Queue mode adds BullMQ's script calls, the worker's start check and
 * the HTTP layer on top; this says how much of the added latency the chosen stack leaves to us.
 *
 * Also counts the Redis commands a call costs (INFO commandstats, commands inside scripts included):
 * a figure the machine's load cannot skew.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';
import { benchConnection } from './harness';

const JOBS_KEY = 'bench-floor:jobs';

export interface Percentiles {
  p50: number;
  p99: number;
}

/** Every command Redis has run so far (the calls of every command in INFO commandstats). */
export async function redisCommandCount(r: Redis): Promise<number> {
  const info = await r.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/calls=(\d+)/g)) total += Number(m[1]);
  return total;
}

function spawnEcho(redisUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [__filename, '--echo', redisUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`floor echo process exited with ${code}`)));
  });
}

async function echoMain(redisUrl: string): Promise<void> {
  const r = benchConnection(redisUrl);
  await r.ping();
  process.stdout.write('ready\n');
  for (;;) {
    const popped = await r.blpop(JOBS_KEY, 0);
    if (!popped) continue;
    await r.xadd(popped[1], '*', 'v', '1');
  }
}

/** p50 / p99 of the floor chain over `calls` calls, after a warm-up. */
export async function floorLatency(
  redisUrl: string,
  calls: number,
  sample: (fn: () => Promise<unknown>, n: number) => Promise<Percentiles>,
): Promise<Percentiles> {
  const echo = await spawnEcho(redisUrl);
  const sender = benchConnection(redisUrl);
  const reader = benchConnection(redisUrl);
  let n = 0;
  try {
    return await sample(async () => {
      const stream = `bench-floor:s:${n++}`;
      await sender.lpush(JOBS_KEY, stream);
      const got = await reader.xread('BLOCK', 1000, 'STREAMS', stream, '0-0');
      if (!got) throw new Error('floor chain: no entry within 1 s');
      void sender.del(stream);
    }, calls);
  } finally {
    echo.kill('SIGKILL');
    sender.disconnect();
    reader.disconnect();
  }
}

if (process.argv[2] === '--echo') {
  echoMain(process.argv[3]!).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
