/**
 * What a queued call cannot go below, for bench:proxy's latency goal (issue 27: queue added p50 <= 1 ms):
 * the shortest chain any Redis queue between two processes needs, with no queue library, no HTTP and no
 * command. The client LPUSHes a stream key, an echo process woken from BLPOP XADDs one entry to it,
 * and the client's XREAD BLOCK (on a connection of its own, as the api's reader) wakes: two processes,
 * two wake-ups, three commands. Queue mode adds BullMQ's script calls, the worker's start check and
 * the HTTP layer on top; this says how much of the added latency the chosen stack leaves to us.
 *
 * The BullMQ chain is the same with the queue library the stack chose and nothing of ours: the client
 * adds a job as the api does (job id, one attempt, removed when done), a bare BullMQ worker (its
 * default concurrency as ours, 4) XADDs one entry from its processor, the client's XREAD BLOCK wakes.
 * What queue mode adds above it is HTTP, the api's checks and the worker's own steps.
 *
 * Also counts the Redis commands a call costs (INFO commandstats, commands inside scripts included):
 * a figure the machine's load cannot skew.
 */
import { Queue, Worker } from 'bullmq';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Redis } from 'ioredis';
import { benchConnection } from './harness';

const JOBS_KEY = 'bench-floor:jobs';
const BULL_QUEUE = 'bench-floor-bull';
/** The command worker's default long-lane concurrency. */
const BULL_CONCURRENCY = 4;

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

function spawnEcho(redisUrl: string, kind: '--echo' | '--bullmq-echo'): Promise<ChildProcess> {
  const child = spawn(process.execPath, [__filename, kind, redisUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
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

async function bullmqEchoMain(redisUrl: string): Promise<void> {
  const out = benchConnection(redisUrl);
  const worker = new Worker<{ stream: string }>(
    BULL_QUEUE,
    async (job) => {
      await out.xadd(job.data.stream, '*', 'v', '1');
    },
    { connection: benchConnection(redisUrl, { maxRetriesPerRequest: null }), concurrency: BULL_CONCURRENCY },
  );
  await worker.waitUntilReady();
  process.stdout.write('ready\n');
}

type Sample = (fn: () => Promise<unknown>, n: number) => Promise<Percentiles>;

/**
 * One chain's p50 / p99 over `calls` calls, after a warm-up: `send` hands the echo process the
 * stream to write to (on the sender connection), then the reader's XREAD BLOCK waits for its entry.
 */
async function chainLatency(
  redisUrl: string,
  calls: number,
  sample: Sample,
  echoKind: '--echo' | '--bullmq-echo',
  send: (sender: Redis, stream: string, n: number) => Promise<unknown>,
  close: () => Promise<void> = async () => undefined,
): Promise<Percentiles> {
  const echo = await spawnEcho(redisUrl, echoKind);
  const sender = benchConnection(redisUrl);
  const reader = benchConnection(redisUrl);
  let n = 0;
  try {
    return await sample(async () => {
      const stream = `bench-floor:${echoKind}:${n}`;
      await send(sender, stream, n++);
      const got = await reader.xread('BLOCK', 1000, 'STREAMS', stream, '0-0');
      if (!got) throw new Error(`${echoKind} chain: no entry within 1 s`);
      void sender.del(stream);
    }, calls);
  } finally {
    echo.kill('SIGKILL');
    await close();
    sender.disconnect();
    reader.disconnect();
  }
}

/** p50 / p99 of the floor chain over `calls` calls, after a warm-up. */
export function floorLatency(redisUrl: string, calls: number, sample: Sample): Promise<Percentiles> {
  return chainLatency(redisUrl, calls, sample, '--echo', (sender, stream) => sender.lpush(JOBS_KEY, stream));
}

/** p50 / p99 of the BullMQ chain over `calls` calls, after a warm-up. */
export function bullmqFloorLatency(redisUrl: string, calls: number, sample: Sample): Promise<Percentiles> {
  let queue: Queue<{ stream: string }> | undefined;
  return chainLatency(
    redisUrl,
    calls,
    sample,
    '--bullmq-echo',
    (sender, stream, n) => {
      queue ??= new Queue<{ stream: string }>(BULL_QUEUE, { connection: sender });
      return queue.add(
        'floor',
        { stream },
        { jobId: `job-${n}`, attempts: 1, removeOnComplete: true, removeOnFail: true },
      );
    },
    async () => {
      await queue?.close();
    },
  );
}

const role = process.argv[2];
if (role === '--echo' || role === '--bullmq-echo') {
  (role === '--echo' ? echoMain : bullmqEchoMain)(process.argv[3]!).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
