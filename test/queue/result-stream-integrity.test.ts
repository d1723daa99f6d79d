import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { CommandOutput, CommandRunner } from '../../src/core/command-runner';
import { isFusionError } from '../../src/core/errors';
import { silentLogger } from '../../src/core/ports/logger';
import { executeCommand, type CommandOutcome } from '../../src/dispatch/command-execution';
import { resultKeys, type ResultKeys } from '../../src/queue/result-keys';
import { ResultStreamReader } from '../../src/queue/result-stream-reader';
import { ResultStreamWriter, type ResultStreamWriterOptions } from '../../src/queue/result-stream-writer';
import { redisPing } from '../support/redis-ping';
import { redisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/until';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function writerOptions(over: Partial<ResultStreamWriterOptions> = {}): ResultStreamWriterOptions {
  return {
    chunkBytes: 2048,
    lingerMs: 1,
    maxBacklogEntries: 100_000,
    ttlMs: 60_000,
    endTtlMs: 60_000,
    progressIntervalMs: 1000,
    readerIdleTimeoutMs: 60_000,
    signal: new AbortController().signal,
    ...over,
  };
}

/** Connections for one writer and one reader against `url`; close() quits them all. */
async function streamPair(url: string, readerOpts: { count?: number; idleTimeoutMs?: number } = {}) {
  const keys = resultKeys(uniquePrefix('integrity'), uniquePrefix('job'));
  const writerConn = new Redis(url, { maxRetriesPerRequest: 1 });
  const control = new Redis(url, { maxRetriesPerRequest: 1 });
  const blocking = new Redis(url, { maxRetriesPerRequest: 1 });
  const clientId = Number(await blocking.client('ID'));
  const reader = new ResultStreamReader({ redis: blocking, clientId }, control, keys, {
    idleTimeoutMs: readerOpts.idleTimeoutMs ?? 5000,
    blockMs: 200,
    count: readerOpts.count ?? 16,
  });
  const close = async (): Promise<void> => {
    await Promise.all([writerConn, control, blocking].map((r) => r.quit().catch(() => r.disconnect())));
  };
  return { keys, writerConn, control, reader, close };
}

/** Reads the whole stream: the items that arrived, and the error when it did not end normally. */
async function consume(
  reader: ResultStreamReader,
  onChunk: (index: number) => Promise<void> = async () => undefined,
): Promise<{ items: number; error?: unknown }> {
  let items = 0;
  let index = 0;
  try {
    for await (const chunk of reader.read(new AbortController().signal)) {
      items += chunk.items;
      await onChunk(index);
      index += 1;
    }
    return { items };
  } catch (error) {
    return { items, error };
  }
}

function run(runner: CommandRunner, writer: ResultStreamWriter, jobId: string): Promise<CommandOutcome> {
  writer.start();
  return executeCommand(runner, { type: 'std:account:list', input: {}, config: {}, requestId: jobId }, writer, {
    signal: new AbortController().signal,
    logger: silentLogger,
    component: 'worker',
  });
}

const pad = (bytes: number): string => 'x'.repeat(bytes);

describe('result stream integrity', () => {
  describe('on a Redis that refuses writes (maxmemory, noeviction)', () => {
    let child: ChildProcess | undefined;
    let dir = '';
    let url = '';

    beforeAll(async () => {
      const bin = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
      if (!bin) throw new Error('this test needs redis-server on PATH (apt-get install -y redis-server)');
      const port = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as net.AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fusion-oom-redis-'));
      // A server of its own: the shared test Redis must not run out of memory under other tests.
      child = spawn(
        bin,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
        { stdio: 'ignore' },
      );
      url = `redis://127.0.0.1:${port}`;
      await until('the Redis answers a PING', () => redisPing(url, 300), 5000, 10);
      const admin = new Redis(url);
      try {
        const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))?.[1]);
        expect(used).toBeGreaterThan(0);
        // Room for a few chunks only: an unread backlog soon makes Redis refuse XADD with OOM.
        await admin.config('SET', 'maxmemory', String(used + 256 * 1024));
        await admin.config('SET', 'maxmemory-policy', 'noeviction');
      } finally {
        await admin.quit();
      }
    });

    afterAll(async () => {
      if (child && child.exitCode === null) {
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('fails the command when an XADD is refused, never ends normally with fewer items', async () => {
      const total = 3000;
      const pair = await streamPair(url, { idleTimeoutMs: 1500 });
      const writer = new ResultStreamWriter(pair.writerConn, pair.keys, writerOptions({ chunkBytes: 8192 }));
      const allYielded = deferred();
      const drained = deferred();
      // The reader stays away while the command writes (a slow api), then catches up before the end entry.
      const runner: CommandRunner = async function* (): AsyncGenerator<CommandOutput> {
        for (let i = 0; i < total; i += 1) yield { i, pad: pad(1000) };
        allYielded.resolve();
        await drained.promise;
      };
      try {
        const outcome = run(runner, writer, 'oom-job');
        await Promise.race([allYielded.promise, outcome]);
        let readerDone = false;
        const reading = consume(pair.reader).finally(() => (readerDone = true));
        // The pressure passes once the reader has caught up, so the end entry itself gets through.
        // A reader that gave up first (a loaded machine can starve it past its idle timeout) will
        // drain nothing more: the pressure passes then too.
        const watchDrain = until(
          'the stream drained or its reader finished',
          async () => readerDone || (await pair.control.xlen(pair.keys.stream)) === 0,
          10_000,
          10,
        )
          .then(() => pair.control.config('SET', 'maxmemory', '0'))
          .then(drained.resolve);
        const result = await reading;
        await watchDrain;
        expect(await outcome).toBe('error');
        expect(result.items).toBeLessThan(total);
        expect(result.error).toBeDefined();
        expect(isFusionError(result.error)).toBe(true);
      } finally {
        drained.resolve();
        await pair.close();
      }
    });
  });

  it('fails the reader when unread entries vanish mid-read (stream deleted and recreated by later writes)', async () => {
    const pair = await streamPair(redisUrl(), { count: 1 });
    const writer = new ResultStreamWriter(pair.writerConn, pair.keys, writerOptions());
    const deleted = deferred();
    const runner: CommandRunner = async function* (): AsyncGenerator<CommandOutput> {
      for (let i = 0; i < 100; i += 1) yield { i, pad: pad(200) };
      await deleted.promise;
      for (let i = 100; i < 500; i += 1) yield { i, pad: pad(200) };
    };
    try {
      const outcome = run(runner, writer, 'gap-job');
      const result = await consume(pair.reader, async (index) => {
        if (index !== 0) return;
        // Entry 0 is in hand; at least two more are written and not yet read: they are lost.
        await until('three entries written', async () => (await pair.control.xlen(pair.keys.stream)) >= 3, 10_000, 10);
        await pair.control.del(pair.keys.stream);
        deleted.resolve();
      });
      expect(await outcome).toBe('success');
      expect(result.items).toBeLessThan(500);
      expect(isFusionError(result.error, 'PROXY_STREAM_ABORTED')).toBe(true);
      expect((result.error as Error).message).toMatch(/lost entries/);
    } finally {
      deleted.resolve();
      await pair.close();
    }
  });

  describe('checks the numbering and the end totals', () => {
    const data = (q: number | undefined, n: number): string[] => [
      't',
      'd',
      ...(q === undefined ? [] : ['q', String(q)]),
      'n',
      String(n),
      'd',
      `${Array.from({ length: n }, () => '{}').join('\n')}\n`,
    ];
    const end = (q: number, n: number): string[] => ['t', 'end', 'q', String(q), 'n', String(n)];

    async function readCrafted(entries: string[][]): Promise<{ items: number; error?: unknown }> {
      const pair = await streamPair(redisUrl());
      try {
        for (const e of entries) await pair.control.xadd(pair.keys.stream, '*', ...e);
        await pair.control.pexpire(pair.keys.stream, 60_000);
        return await consume(pair.reader);
      } finally {
        await pair.close();
      }
    }

    it('ends normally when every entry arrived and the totals match', async () => {
      const r = await readCrafted([data(0, 2), ['t', 'p'], data(1, 1), end(2, 3)]);
      expect(r.error).toBeUndefined();
      expect(r.items).toBe(3);
    });

    it.each([
      ['the first entries are missing', [data(1, 2), end(2, 4)], /expected output entry 0, got 1/],
      ['an entry in the middle is missing', [data(0, 2), data(2, 1), end(3, 5)], /expected output entry 1, got 2/],
      ['an entry is unnumbered', [data(0, 2), data(undefined, 1), end(2, 3)], /unnumbered/],
      [
        'the last entries are missing',
        [data(0, 2), end(2, 3)],
        /wrote 2 entries with 3 items, 1 entries with 2 items arrived/,
      ],
      [
        'the item total differs',
        [data(0, 2), data(1, 1), end(2, 4)],
        /wrote 2 entries with 4 items, 2 entries with 3 items arrived/,
      ],
      ['the end entry has no totals', [data(0, 2), ['t', 'end']], /wrote \? entries/],
    ])('fails when %s', async (_why, entries, message) => {
      const r = await readCrafted(entries);
      expect(isFusionError(r.error, 'PROXY_STREAM_ABORTED')).toBe(true);
      expect((r.error as Error).message).toMatch(message);
    });
  });

  describe('keeps the stream alive without chunk writes', () => {
    let pair: Awaited<ReturnType<typeof streamPair>>;
    let keys: ResultKeys;
    beforeEach(async () => {
      pair = await streamPair(redisUrl());
      keys = pair.keys;
    });
    afterEach(async () => {
      await pair.close();
    });

    it('while the writer waits for a reader slower than the TTL', async () => {
      const writer = new ResultStreamWriter(
        pair.writerConn,
        keys,
        writerOptions({ chunkBytes: 1024, maxBacklogEntries: 4, ttlMs: 300 }),
      );
      const runner: CommandRunner = async function* (): AsyncGenerator<CommandOutput> {
        for (let i = 0; i < 200; i += 1) yield { i, pad: pad(100) };
      };
      const outcome = run(runner, writer, 'ttl-job');
      await until('five entries written', async () => (await pair.control.xlen(keys.stream)) > 4, 10_000, 10);
      // The reader stays away for several TTLs while the writer waits for room.
      await sleep(1200);
      expect(await pair.control.pttl(keys.stream)).toBeGreaterThan(0);
      const result = await consume(pair.reader);
      expect(result.error).toBeUndefined();
      expect(result.items).toBe(200);
      expect(await outcome).toBe('success');
    });

    it('on progress signals', async () => {
      const writer = new ResultStreamWriter(
        pair.writerConn,
        keys,
        writerOptions({ ttlMs: 200, progressIntervalMs: 20 }),
      );
      writer.start();
      for (let i = 0; i < 40; i += 1) {
        writer.progress();
        await sleep(15);
      }
      // Recreated by a progress XADD without a TTL, the key would stay forever (pttl -1).
      expect(await pair.control.pttl(keys.stream)).toBeGreaterThan(0);
      await writer.end();
      const result = await consume(pair.reader);
      expect(result.error).toBeUndefined();
      expect(result.items).toBe(0);
    });
  });
});
