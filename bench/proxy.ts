/**
 * Proxy transport benchmark: the same scripted runner behind a bare node:http server writing
 * NDJSON (the direct baseline: HTTP and parsing included, no proxy), through the embedded
 * server and through queue mode (BullMQ + Redis streams), over loopback HTTP. The client parses
 * every line in every mode.
 *   npm run bench:proxy            (spawns redis-server on a free port, or uses REDIS_URL)
 *   BENCH_CALLS=500 BENCH_ITEMS=200000 BENCH_ITEM_BYTES=250 BENCH_REPEATS=5 npm run bench:proxy
 * Each large transfer runs BENCH_REPEATS (>= 5) times per mode, interleaved; ratios are medians.
 * Needs --expose-gc (the npm script passes it): RSS is read after a forced GC.
 * Exits 1 when a goal is missed. Numbers on a shared machine are indicative.
 */
import { quickLaneLatency, type QuickLaneFigures } from './proxy-quick-lane';
import { benchConnection, spawnRedis, type BenchRedis } from './harness';
import { bullmqFloorLatency, floorLatency, redisCommandCount } from './proxy-floor';
import { ndjsonCall, type CallResult } from './ndjson-call';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type { CommandContext, CommandOutput, CommandRunner } from '../src/core/command-runner';
import { silentLogger } from '../src/core/ports/logger';
import { createLogger } from '../src/observability/logger';
import { CommandWorker } from '../src/queue/command-worker';
import { JobCrypto } from '../src/queue/job-crypto';
import { activeListKey } from '../src/queue/queue-names';
import { loadEnv } from '../src/server/env';
import { startServer, type RunningServer } from '../src/server/server';

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 200_000);
const ITEM_BYTES = Number(process.env.BENCH_ITEM_BYTES ?? 250);
const REPEATS = Math.max(5, Number(process.env.BENCH_REPEATS ?? 5));
const PASSWORD = 'bench-password-0123456789';

const PAD = 'x'.repeat(Math.max(0, ITEM_BYTES - 60));

/** Long commands running now in this process (embedded mode's held aggregations). */
let holding = 0;

/**
 * One item for `small`, ITEMS items of ~ITEM_BYTES for `large`; with `holdMs`, an aggregation that
 * holds its slot until the client leaves (section c).
 */
const runner: CommandRunner = (_type, input, _config, ctx: CommandContext) =>
  (async function* gen(): AsyncGenerator<CommandOutput> {
    if (typeof input.holdMs === 'number') {
      holding++;
      try {
        const end = Date.now() + input.holdMs;
        while (!ctx.signal.aborted && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      } finally {
        holding--;
      }
      return;
    }
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

async function startRedis(): Promise<BenchRedis> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: async () => undefined };
  return spawnRedis();
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** POSTs and parses the NDJSON response line by line (the benches' one call, bench/ndjson-call.ts). */
const call = (url: string, payload: string): Promise<CallResult> => ndjsonCall(url, payload, { agent });

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function median(xs: number[]): number {
  return pct(
    [...xs].sort((a, b) => a - b),
    50,
  );
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

/**
 * The direct baseline: the runner behind a bare node:http server that parses the body and writes
 * NDJSON with backpressure, no authentication, validation, queue or metrics. What the proxy adds is
 * measured against this, so HTTP and JSON on both ends are not counted as proxy cost.
 */
function startDirect(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      void (async () => {
        const { type, input } = JSON.parse(raw) as { type: string; input: Record<string, unknown> };
        const ac = new AbortController();
        res.on('close', () => ac.abort());
        res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8' });
        const ctx = { signal: ac.signal, logger: silentLogger, jobId: 'direct', progress: () => undefined };
        let chunk = '';
        for await (const item of runner(type as 'std:account:list', input, {}, ctx)) {
          chunk += `${JSON.stringify(item)}\n`;
          // The first line at once (time to first item), then 16 KB writes.
          if (chunk.length >= 16_384 || !res.headersSent) {
            if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
            chunk = '';
          }
        }
        res.end(chunk);
      })();
    });
  });
  // node:http closes a keep-alive socket after 5 s idle; the client's agent keeps it while the other
  // modes' transfers run (several seconds each), then reuses it as the server closes it: ECONNRESET.
  // Fastify's default (72 s) already outlasts a round of transfers.
  server.keepAliveTimeout = 120_000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    }),
  );
}

const QUEUE_NAME = `bench-${process.pid}`;
const JOB_KEY = 'b'.repeat(64);

/** The worker process's CPU time (microseconds) as it last reported it, after its latest job. */
let workerCpuUs = 0;
let workerJobsDone = 0;

/** Queue mode as deployed: the worker is another process (`proxy.js --worker <redis> <queue>`). */
function spawnWorker(redisUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [__filename, '--worker', redisUrl, QUEUE_NAME], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let rest = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => {
    const lines = (rest + d).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^cpu (\d+)$/.exec(line);
      if (m) {
        workerCpuUs = Number(m[1]);
        workerJobsDone++;
      }
    }
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
}

/** CPU seconds Redis has used so far (INFO cpu). */
async function redisCpuUs(r: Redis): Promise<number> {
  const info = await r.info('cpu');
  const v = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return Math.round((v('used_cpu_user') + v('used_cpu_sys')) * 1e6);
}

async function workerMain(redisUrl: string, queueName: string): Promise<void> {
  const worker = new CommandWorker({
    redisUrl,
    runner,
    crypto: JobCrypto.fromKey(JOB_KEY),
    logger: silentLogger,
    concurrency: 4,
    quickConcurrency: 4,
    queueName,
  });
  await worker.worker.waitUntilReady();
  // CPU time after each job (microseconds, user + system): the parent charges it to the transfer.
  const cpu = (): void => {
    const u = process.cpuUsage();
    process.stdout.write(`cpu ${u.user + u.system}\n`);
  };
  worker.worker.on('completed', cpu);
  worker.worker.on('failed', cpu);
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

interface Transfer {
  mbps: number;
  firstItemMs: number;
  mb: number;
  items: number;
  redisPeakMb: number;
  rssGrowthMb: number;
  /** CPU time of the transfer, all processes involved (ms): this one (client and api), worker, Redis. */
  cpuMs: number;
}

async function throughput(url: string, monitor?: Redis): Promise<Transfer> {
  gc();
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
  const worker0 = { cpu: workerCpuUs, jobs: workerJobsDone };
  const redis0 = monitor ? await redisCpuUs(monitor) : 0;
  const own0 = process.cpuUsage();
  const r = await call(`${url}/`, body('large'));
  const own = process.cpuUsage(own0);
  sampling = false;
  await sampler;
  let cpuUs = own.user + own.system;
  if (monitor) {
    // The worker reports after the job completes, which may be just after the response ended.
    for (let i = 0; i < 200 && workerJobsDone === worker0.jobs; i++) await new Promise((res) => setTimeout(res, 10));
    cpuUs += workerCpuUs - worker0.cpu + ((await redisCpuUs(monitor)) - redis0);
  }
  if (r.items !== ITEMS) throw new Error(`${url}: ${r.items} items streamed, ${ITEMS} expected`);
  return {
    mbps: r.bytes / 1e6 / (r.ms / 1000),
    firstItemMs: r.firstItemMs,
    mb: r.bytes / 1e6,
    items: r.items,
    redisPeakMb: (peak - base) / 1e6,
    rssGrowthMb: (rssPeak - rss0) / 1e6,
    cpuMs: cpuUs / 1000,
  };
}

/** The one of `runs` with the median throughput (all its figures come from that run). */
function medianRun(runs: Transfer[]): Transfer {
  return [...runs].sort((a, b) => a.mbps - b.mbps)[Math.floor(runs.length / 2)]!;
}

function gc(): void {
  if (!global.gc) throw new Error('bench:proxy needs node --expose-gc (npm run bench:proxy passes it)');
  global.gc();
}

async function main(): Promise<void> {
  gc();
  const redis = await startRedis();
  const monitor = benchConnection(redis.url);
  const direct = await startDirect();
  const embedded = await start();
  const worker = await spawnWorker(redis.url);
  const queue = await start(redis.url);
  let missed = 0;
  try {
    console.log(
      `proxy bench: ${CALLS} small calls per mode; ${ITEMS} items of ~${ITEM_BYTES} B, ${REPEATS} transfers per mode; node ${process.version}, ${os.cpus().length} cpus`,
    );
    console.log(
      'client and api share this process; in queue mode the worker is a child process (as api and worker pods are); direct = the runner behind a bare node:http server',
    );
    const small = body('small');
    const lDirect = await latency(() => call(`${direct.url}/`, small), CALLS);
    const lEmb = await latency(() => call(`${embedded.url}/`, small), CALLS);
    const commandsBefore = await redisCommandCount(monitor);
    const lQueue = await latency(() => call(`${queue.url}/`, small), CALLS);
    // Warm-up calls included; the workers' background calls (stalled checks, lease renewals) too.
    const commandsPerCall = ((await redisCommandCount(monitor)) - commandsBefore) / (CALLS + Math.min(50, CALLS));
    const lFloor = await floorLatency(redis.url, CALLS, latency);
    const lBull = await bullmqFloorLatency(redis.url, CALLS, latency);

    // One untimed transfer per mode first: the first large transfer of a mode runs cold (JIT, buffers),
    // and a cold embedded run against a warm queue run made the first ratio look like a slow-down after it.
    for (const url of [direct.url, embedded.url, queue.url]) await throughput(url);
    // Interleaved, so that a burst of load from elsewhere on the machine hits every mode alike.
    const runs = { direct: [] as Transfer[], embedded: [] as Transfer[], queue: [] as Transfer[] };
    const ratios: number[] = [];
    const ratiosDirect: number[] = [];
    const cpuRatios: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      const d = await throughput(direct.url);
      const e = await throughput(embedded.url);
      const q = await throughput(queue.url, monitor);
      runs.direct.push(d);
      runs.embedded.push(e);
      runs.queue.push(q);
      ratios.push(q.mbps / e.mbps);
      cpuRatios.push(e.cpuMs / q.cpuMs);
      ratiosDirect.push(q.mbps / d.mbps);
    }
    const [tDirect, tEmb, tQueue] = [medianRun(runs.direct), medianRun(runs.embedded), medianRun(runs.queue)];
    // (c) The server's and the worker's default slots (4 long) all hold an aggregation, 4 more wait.
    const quick: Record<'embedded' | 'queue', QuickLaneFigures> = {
      embedded: await quickLaneLatency({ url: embedded.url, password: PASSWORD, longSlots: 4, running: () => holding }),
      queue: await quickLaneLatency({
        url: queue.url,
        password: PASSWORD,
        longSlots: 4,
        running: () => monitor.llen(activeListKey(QUEUE_NAME)),
      }),
    };
    const ratio = median(ratios);

    const f = (n: number, d = 2): string => n.toFixed(d);
    console.log('\n(a) one-item command, latency per call (ms)');
    console.table({
      direct: { p50: f(lDirect.p50), p99: f(lDirect.p99) },
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
      },
      'floor (Redis only)': { p50: f(lFloor.p50), p99: f(lFloor.p99) },
      'BullMQ chain': { p50: f(lBull.p50), p99: f(lBull.p99) },
    });
    console.log(
      'floor: the least chain a Redis queue needs between two processes (LPUSH, BLPOP woken, XADD, XREAD BLOCK woken), no HTTP',
    );
    console.log(
      'BullMQ chain: the same through BullMQ (Queue.add as the api adds, a bare Worker of concurrency 4 XADDs from its processor), no HTTP, nothing of ours',
    );
    console.log(`(b) ${ITEMS} items, one streamed response; the median of ${REPEATS} transfers per mode`);
    const row = (t: Transfer): Record<string, string> => ({
      MB: f(t.mb, 1),
      'MB/s': f(t.mbps, 1),
      'first item ms': f(t.firstItemMs, 1),
      'RSS growth MB (after GC)': f(t.rssGrowthMb, 1),
      'CPU ms': f(t.cpuMs, 0),
    });
    console.table({
      direct: row(tDirect),
      embedded: row(tEmb),
      queue: { ...row(tQueue), 'Redis peak growth MB': f(tQueue.redisPeakMb, 1) },
    });
    // Per-transfer MB/s, so a slow-down that builds up across transfers shows apart from noise.
    for (const [mode, list] of Object.entries(runs))
      console.log(`${`${mode} MB/s per transfer:`.padEnd(31)} ${list.map((t) => f(t.mbps, 1)).join(' ')}`);
    console.log(`queue / embedded per transfer: ${ratios.map((r) => f(r)).join(' ')}`);
    console.log(`queue / direct per transfer:   ${ratiosDirect.map((r) => f(r)).join(' ')}`);
    console.log('(c) test connection while every long slot runs an aggregation and as many wait (ms)');
    console.table({
      embedded: { p50: f(quick.embedded.p50), max: f(quick.embedded.max), calls: quick.embedded.calls },
      queue: { p50: f(quick.queue.p50), max: f(quick.queue.max), calls: quick.queue.calls },
    });
    // What the machine's load cannot skew: CPU time per transfer (queue: api and client, worker, Redis).
    console.log(`embedded / queue CPU time:     ${cpuRatios.map((r) => f(r)).join(' ')}`);

    console.log('\ngoals');
    const goal = (label: string, value: string, ok: boolean, want: string): void => {
      if (!ok) missed++;
      console.log(`  ${label.padEnd(40)} ${value.padStart(10)}   goal ${want.padEnd(10)} ${ok ? 'ok' : 'MISSED'}`);
    };
    const addP50 = lQueue.p50 - lDirect.p50;
    const addP99 = lQueue.p99 - lDirect.p99;
    goal('queue added latency p50 vs direct', `${f(addP50)} ms`, addP50 <= 1, '<= 1 ms');
    goal('queue added latency p99 vs direct', `${f(addP99)} ms`, addP99 <= 5, '<= 5 ms');
    goal('queue / embedded streaming (median)', f(ratio), ratio >= 0.85, '>= 0.85');
    for (const mode of ['embedded', 'queue'] as const)
      goal(
        `test connection, all long slots busy (${mode}, max)`,
        `${f(quick[mode].max)} ms`,
        quick[mode].max < 1000,
        '< 1 s',
      );
    console.log('  other figures (earlier goals in brackets)');
    console.log(`    queue / direct streaming (median)    ${f(median(ratiosDirect))}`);
    console.log(
      `    embedded / queue CPU time (median)   ${f(median(cpuRatios))}   (the streaming ratio when the cores are saturated)`,
    );
    console.log(
      `    Redis commands per one-item call     ${f(commandsPerCall, 1)}   (queue mode, inside BullMQ's scripts and background calls included)`,
    );
    console.log(
      `    queue added p50 less the floor chain ${f(addP50 - lFloor.p50)} ms   (HTTP, BullMQ and the worker's own work; the floor is ${f(lFloor.p50)} ms)`,
    );
    // Where the added p50 goes: what embedded mode adds too (HTTP, auth, validation), the queue
    // library's own chain, the rest.
    const ours = addP50 - (lEmb.p50 - lDirect.p50) - lBull.p50;
    console.log(
      `    queue added p50, by part             embedded's own ${f(lEmb.p50 - lDirect.p50)} + BullMQ chain ${f(lBull.p50)} + the rest ${f(ours)} ms   (the rest: reader lease, sealing, the worker's start check and stream writer)`,
    );
    console.log(
      `    BullMQ chain alone, p50 / p99        ${f(lBull.p50)} / ${f(lBull.p99)} ms   (what the 1 / 5 ms goals leave to everything else)`,
    );
    console.log(`    queue MB/s (median transfer)         ${f(tQueue.mbps, 1)}   [>= 40]`);
    console.log(`    time to first item, queue            ${f(tQueue.firstItemMs, 1)} ms   [<= 100 ms]`);
    console.log(
      `    Redis peak growth                    ${f(tQueue.redisPeakMb, 1)} MB for ${f(tQueue.mb, 0)} MB   [<= 32 MB]`,
    );
  } finally {
    await direct.close();
    await embedded.close();
    await queue.close();
    worker.kill('SIGTERM');
    agent.destroy();
    monitor.disconnect();
    await redis.stop();
  }
  if (missed) {
    console.log(`\n${missed} goal(s) missed`);
    process.exitCode = 1;
  }
}

const entry = process.argv[2] === '--worker' ? workerMain(process.argv[3]!, process.argv[4]!) : main();
entry.catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
