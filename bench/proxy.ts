/**
 * Proxy transport benchmark: the same scripted runner called directly, through the embedded
 * server and through queue mode (BullMQ + Redis streams), over loopback HTTP.
 *   npm run bench:proxy            (spawns redis-server on a free port, or uses REDIS_URL)
 *   BENCH_CALLS=500 BENCH_ITEMS=200000 BENCH_ITEM_BYTES=250 npm run bench:proxy
 * Numbers on a shared machine are indicative; compare the ratios of one run.
 */
import { freePort } from './free-port';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { CommandContext, CommandOutput, CommandRunner } from '../src/core/command-runner';
import { silentLogger } from '../src/core/ports/logger';
import { createLogger } from '../src/observability/logger';
import { CommandWorker } from '../src/queue/command-worker';
import { JobCrypto } from '../src/queue/job-crypto';
import { loadEnv } from '../src/server/env';
import { startServer, type RunningServer } from '../src/server/server';

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 200_000);
const ITEM_BYTES = Number(process.env.BENCH_ITEM_BYTES ?? 250);
const PASSWORD = 'bench-password-0123456789';

const PAD = 'x'.repeat(Math.max(0, ITEM_BYTES - 60));

/** One item for `small`, ITEMS items of ~ITEM_BYTES for `large`. */
const runner: CommandRunner = (_type, input, _config, ctx: CommandContext) =>
  (async function* gen(): AsyncGenerator<CommandOutput> {
    const n = input.size === 'large' ? ITEMS : 1;
    for (let i = 0; i < n; i++) {
      if (ctx.signal.aborted) return;
      yield { id: i, name: `account-${i}`, pad: PAD };
    }
  })();

function body(size: 'small' | 'large'): string {
  return JSON.stringify({
    type: 'std:account:list',
    input: { size },
    config: { proxyPassword: PASSWORD, clientSecret: 'bench-secret' },
  });
}

async function startRedis(): Promise<{ url: string; child?: ChildProcess; dir?: string }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL };
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
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

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

interface CallResult {
  ms: number;
  firstItemMs: number;
  bytes: number;
}

function call(url: string, payload: string): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let firstItemMs = -1;
    let bytes = 0;
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.on('data', (d: Buffer) => {
          bytes += d.length;
          if (firstItemMs < 0 && d.includes(0x7b)) firstItemMs = Number(process.hrtime.bigint() - t0) / 1e6;
        });
        res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, firstItemMs, bytes }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function latency(fn: () => Promise<unknown>, n: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(50, n); i++) await fn(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: pct(samples, 50), p99: pct(samples, 99) };
}

async function direct(size: 'small' | 'large'): Promise<number> {
  let bytes = 0;
  const ctx = {
    signal: new AbortController().signal,
    logger: silentLogger,
    jobId: 'direct',
    progress: () => undefined,
  };
  for await (const item of runner('std:account:list', { size }, {}, ctx)) bytes += JSON.stringify(item).length + 1;
  return bytes;
}

const QUEUE_NAME = `bench-${process.pid}`;
const JOB_KEY = 'b'.repeat(64);

/** Queue mode as deployed: the worker is another process (`proxy.js --worker <redis> <queue>`). */
function spawnWorker(redisUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [__filename, '--worker', redisUrl, QUEUE_NAME], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
}

async function workerMain(redisUrl: string, queueName: string): Promise<void> {
  const worker = new CommandWorker({
    redisUrl,
    runner,
    crypto: JobCrypto.fromKey(JOB_KEY),
    logger: silentLogger,
    concurrency: 4,
    queueName,
  });
  await worker.worker.waitUntilReady();
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => void worker.close(1000).then(() => process.exit(0)));
}

async function start(redisUrl?: string): Promise<RunningServer> {
  const env = loadEnv({
    PORT: '0',
    HOST: '127.0.0.1',
    PROXY_PASSWORD: PASSWORD,
    LOG_LEVEL: 'error',
    WORKER_CONCURRENCY: '4',
    QUEUE_NAME,
    ...(redisUrl ? { REDIS_URL: redisUrl, JOB_ENCRYPTION_KEY: JOB_KEY, ROLE: 'api' } : {}),
  });
  return startServer(env, { runner, logger: createLogger({ level: 'error' }) });
}

async function usedMemory(r: Redis): Promise<number> {
  const info = await r.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

async function throughput(
  server: RunningServer,
  monitor?: Redis,
): Promise<{ mbps: number; firstItemMs: number; mb: number; redisPeakMb: number; rssGrowthMb: number }> {
  const url = `${server.url}/`;
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let rssPeak = rss0;
  const base = monitor ? await usedMemory(monitor) : 0;
  let peak = base;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      if (monitor) peak = Math.max(peak, await usedMemory(monitor));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const r = await call(url, body('large'));
  sampling = false;
  await sampler;
  return {
    mbps: r.bytes / 1e6 / (r.ms / 1000),
    firstItemMs: r.firstItemMs,
    mb: r.bytes / 1e6,
    redisPeakMb: (peak - base) / 1e6,
    rssGrowthMb: (rssPeak - rss0) / 1e6,
  };
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const monitor = new Redis(redis.url);
  const embedded = await start();
  const worker = await spawnWorker(redis.url);
  const queue = await start(redis.url);
  try {
    console.log(
      `proxy bench: ${CALLS} small calls per mode; ${ITEMS} items of ~${ITEM_BYTES} B; node ${process.version}, ${os.cpus().length} cpus`,
    );
    console.log(
      'client and api share this process; in queue mode the worker is a child process (as api and worker pods are)',
    );
    const small = body('small');
    const lDirect = await latency(() => direct('small'), CALLS);
    const lEmb = await latency(() => call(`${embedded.url}/`, small), CALLS);
    const lQueue = await latency(() => call(`${queue.url}/`, small), CALLS);

    const directBytes = await (async () => {
      const t0 = process.hrtime.bigint();
      const b = await direct('large');
      return { mbps: b / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9), mb: b / 1e6 };
    })();
    const tEmb = await throughput(embedded);
    const tQueue = await throughput(queue, monitor);

    const f = (n: number, d = 2): string => n.toFixed(d);
    console.log('\n(a) one-item command, latency per call (ms)');
    console.table({
      direct: { p50: f(lDirect.p50, 3), p99: f(lDirect.p99, 3) },
      embedded: {
        p50: f(lEmb.p50),
        p99: f(lEmb.p99),
        'added p50 vs direct': f(lEmb.p50 - lDirect.p50),
        'added p99 vs direct': f(lEmb.p99 - lDirect.p99),
      },
      queue: {
        p50: f(lQueue.p50),
        p99: f(lQueue.p99),
        'added p50 vs direct': f(lQueue.p50 - lDirect.p50),
        'added p99 vs direct': f(lQueue.p99 - lDirect.p99),
        'added p50 vs embedded': f(lQueue.p50 - lEmb.p50),
        'added p99 vs embedded': f(lQueue.p99 - lEmb.p99),
      },
    });
    console.log(`(b) ${ITEMS} items, one streamed response`);
    console.table({
      direct: { MB: f(directBytes.mb, 1), 'MB/s': f(directBytes.mbps, 1) },
      embedded: {
        MB: f(tEmb.mb, 1),
        'MB/s': f(tEmb.mbps, 1),
        'first item ms': f(tEmb.firstItemMs, 1),
        'RSS growth MB': f(tEmb.rssGrowthMb, 1),
      },
      queue: {
        MB: f(tQueue.mb, 1),
        'MB/s': f(tQueue.mbps, 1),
        'first item ms': f(tQueue.firstItemMs, 1),
        'Redis peak growth MB': f(tQueue.redisPeakMb, 1),
        'RSS growth MB': f(tQueue.rssGrowthMb, 1),
      },
    });
    console.log('ratios and goals:');
    console.log(`  queue added p50 vs direct   ${f(lQueue.p50 - lDirect.p50)} ms   (goal <= 2 ms)`);
    console.log(`  queue added p99 vs direct   ${f(lQueue.p99 - lDirect.p99)} ms   (goal <= 10 ms)`);
    console.log(`  queue MB/s                  ${f(tQueue.mbps, 1)}      (goal >= 40)`);
    console.log(`  queue / embedded throughput ${f(tQueue.mbps / tEmb.mbps)}      (goal >= 0.70)`);
    console.log(`  time to first item (queue)  ${f(tQueue.firstItemMs, 1)} ms (goal <= 100 ms)`);
    console.log(
      `  Redis peak growth           ${f(tQueue.redisPeakMb, 1)} MB for ${f(tQueue.mb, 0)} MB (goal <= 32 MB)`,
    );
  } finally {
    await embedded.close();
    await queue.close();
    worker.kill('SIGTERM');
    agent.destroy();
    monitor.disconnect();
    if (redis.child) {
      redis.child.kill('SIGKILL');
      fs.rmSync(redis.dir!, { recursive: true, force: true });
    }
  }
}

const entry = process.argv[2] === '--worker' ? workerMain(process.argv[3]!, process.argv[4]!) : main();
entry.catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
