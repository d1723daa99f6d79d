import { Redis } from 'ioredis';
import type { CommandOutput, CommandRunner } from '../../src/core/command-runner';
import { silentLogger } from '../../src/core/ports/logger';
import { executeCommand, type CommandOutcome } from '../../src/dispatch/command-execution';
import { resultKeys, type ResultKeys } from '../../src/queue/result-keys';
import { ResultStreamReader } from '../../src/queue/result-stream-reader';
import { ResultStreamWriter, type ResultStreamWriterOptions } from '../../src/queue/result-stream-writer';
import { FusionError } from '../../src/core/errors';
import { redisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/until';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function options(over: Partial<ResultStreamWriterOptions>): ResultStreamWriterOptions {
  return {
    chunkBytes: 1024,
    lingerMs: 1,
    maxBacklogEntries: 100_000,
    ttlMs: 60_000,
    endTtlMs: 60_000,
    progressIntervalMs: 60_000,
    readerIdleTimeoutMs: 60_000,
    signal: new AbortController().signal,
    ...over,
  };
}

/** Counts the chunk writes (pipelines) sent and not yet answered on `redis`. */
function countWritesInFlight(redis: Redis): { max: () => number } {
  let now = 0;
  let max = 0;
  const pipeline = redis.pipeline.bind(redis);
  redis.pipeline = ((...args: Parameters<Redis['pipeline']>) => {
    const p = pipeline(...args);
    const exec = p.exec.bind(p);
    p.exec = (() => {
      now += 1;
      max = Math.max(max, now);
      return exec().finally(() => (now -= 1));
    }) as typeof p.exec;
    return p;
  }) as Redis['pipeline'];
  return { max: () => max };
}

/** Items yielded without awaiting anything: the writer's Redis answers cannot arrive between them. */
function items(total: number): CommandRunner {
  return async function* (): AsyncGenerator<CommandOutput> {
    for (let i = 0; i < total; i += 1) yield { i, pad: 'x'.repeat(300) };
  };
}

function run(runner: CommandRunner, writer: ResultStreamWriter, jobId: string): Promise<CommandOutcome> {
  return executeCommand(runner, { type: 'std:account:list', input: {}, config: {}, requestId: jobId }, writer, {
    signal: new AbortController().signal,
    logger: silentLogger,
    component: 'worker',
  });
}

describe('result stream writer: several chunk writes in flight', () => {
  let writerConn: Redis;
  let control: Redis;
  let blocking: Redis;
  let keys: ResultKeys;
  let reader: ResultStreamReader;

  beforeEach(async () => {
    keys = resultKeys(uniquePrefix('writer'), uniquePrefix('job'));
    writerConn = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
    control = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
    blocking = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
    reader = new ResultStreamReader({ redis: blocking, clientId: Number(await blocking.client('ID')) }, control, keys, {
      idleTimeoutMs: 10_000,
      blockMs: 200,
      count: 1,
    });
  });

  afterEach(async () => {
    await Promise.all([writerConn, control, blocking].map((r) => r.quit().catch(() => r.disconnect())));
  });

  /** Reads everything; returns the item ids in the order they arrived. */
  async function readAll(): Promise<number[]> {
    const ids: number[] = [];
    for await (const chunk of reader.read(new AbortController().signal)) {
      const text = typeof chunk.data === 'string' ? chunk.data : chunk.data.toString('utf8');
      for (const line of text.split('\n')) if (line) ids.push((JSON.parse(line) as { i: number }).i);
    }
    return ids;
  }

  it.each([1, 4])('sends up to %i writes before the first is answered, in order, nothing lost', async (n) => {
    const inFlight = countWritesInFlight(writerConn);
    const writer = new ResultStreamWriter(writerConn, keys, options({ maxWritesInFlight: n }));
    const [outcome, ids] = await Promise.all([run(items(200), writer, 'inflight-job'), readAll()]);
    expect(outcome).toBe('success');
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(inFlight.max()).toBe(n);
  });

  it('counts writes in flight towards the backlog bound while the reader is away', async () => {
    const max = 6;
    const writer = new ResultStreamWriter(writerConn, keys, options({ maxWritesInFlight: 4, maxBacklogEntries: max }));
    let longest = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        longest = Math.max(longest, await control.xlen(keys.stream));
        await sleep(2);
      }
    })();
    const outcome = run(items(400), writer, 'bound-job');
    // The reader comes only once the writer has filled the backlog (no clock decides it).
    await until('the stream at its bound', async () => (await control.xlen(keys.stream)) >= max, 10_000, 5);
    const ids = await readAll();
    polling = false;
    await poller;
    expect(await outcome).toBe('success');
    expect(ids).toHaveLength(400);
    // The bound, plus the one write that finds it full and then waits (as with one write in flight).
    expect(writer.maxBacklogSeen).toBeLessThanOrEqual(max + 1);
    expect(longest).toBeLessThanOrEqual(max + 1);
  });
});

/**
 * A writer's connection and a control connection, opened before each test and closed after it; read
 * them inside the tests (they are replaced for each one).
 */
function twoConnections(): { writer: Redis; control: Redis } {
  const conns = {} as { writer: Redis; control: Redis };
  beforeEach(() => {
    conns.writer = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
    conns.control = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  });
  afterEach(async () => {
    await Promise.all([conns.writer, conns.control].map((r) => r.quit().catch(() => r.disconnect())));
  });
  return conns;
}

describe('result stream writer: after its end or error entry', () => {
  const c = twoConnections();

  /**
   * A cancelled aggregation's page read still in flight reports progress after the command ended;
   * the stream was deleted by then (the api gave up on it, or read its end): a heartbeat must not
   * bring it back for the writer's 10-minute TTL.
   */
  it.each(['end', 'fail'] as const)('a late heartbeat after %s() does not recreate the deleted stream', async (how) => {
    const keys = resultKeys(uniquePrefix('writer'), uniquePrefix('job'));
    const writer = new ResultStreamWriter(c.writer, keys, options({ progressIntervalMs: 0 }));
    writer.start();
    writer.progress();
    if (how === 'end') await writer.end();
    else await writer.fail(new FusionError('COMMAND_CANCELLED', 'the command was cancelled'));
    expect(await c.control.exists(keys.stream)).toBe(1);
    await c.control.del(keys.stream);
    writer.progress();
    // A write the heartbeat queued goes out on the writer's connection before this PING is answered.
    await new Promise((r) => setImmediate(r));
    await c.writer.ping();
    expect(await c.control.exists(keys.stream)).toBe(0);
  });
});

/**
 * The api withdraws a job by setting its cancel key, then deleting its stream. A job that ends
 * after that deletion would recreate the stream for nobody: its terminal transaction drops it,
 * with the cancel key and the reader lease, in the same round trip as its last entries.
 */
describe('result stream writer: a job the api withdrew', () => {
  const c = twoConnections();

  const finish = (writer: ResultStreamWriter, how: 'end' | 'fail'): Promise<void> =>
    how === 'end' ? writer.end() : writer.fail(new FusionError('PROXY_SERVER_ERROR', 'the command failed'));

  it.each(['end', 'fail'] as const)('%s(): leaves nothing behind once the cancel key is set', async (how) => {
    const keys = resultKeys(uniquePrefix('writer'), uniquePrefix('job'));
    await c.control.set(keys.reader, '1', 'PX', 60_000);
    const writer = new ResultStreamWriter(c.writer, keys, options({}));
    expect(writer.write(JSON.stringify({ i: 1 }))).toBeUndefined();
    await c.control.set(keys.cancel, '1', 'PX', 60_000);
    await finish(writer, how);
    expect(writer.closedInRedis).toBe(true);
    expect(await c.control.exists(keys.stream, keys.cancel, keys.reader)).toBe(0);
  });

  it.each(['end', 'fail'] as const)('%s(): keeps the stream for its reader when nobody withdrew it', async (how) => {
    const keys = resultKeys(uniquePrefix('writer'), uniquePrefix('job'));
    await c.control.set(keys.reader, '1', 'PX', 60_000);
    const writer = new ResultStreamWriter(c.writer, keys, options({}));
    expect(writer.write(JSON.stringify({ i: 1 }))).toBeUndefined();
    await finish(writer, how);
    expect(writer.closedInRedis).toBe(true);
    const entries = await c.control.xrange(keys.stream, '-', '+');
    expect(entries.map(([, f]) => f[1])).toEqual(['d', how === 'end' ? 'end' : 'err']);
    expect(await c.control.exists(keys.reader)).toBe(1);
    expect(await c.control.pttl(keys.stream)).toBeGreaterThan(0);
  });

  it('a terminal write Redis refused is not taken for a closed stream', async () => {
    const keys = resultKeys(uniquePrefix('writer'), uniquePrefix('job'));
    // The stream key holds a string: XADD fails inside the transaction.
    await c.control.set(keys.stream, 'not a stream', 'PX', 60_000);
    const writer = new ResultStreamWriter(c.writer, keys, options({}));
    await expect(writer.end()).rejects.toThrow(/WRONGTYPE/);
    expect(writer.closedInRedis).toBe(false);
    // The worker's check after the job then does what the transaction could not.
    await c.control.set(keys.cancel, '1', 'PX', 60_000);
    await writer.dropIfWithdrawn();
    expect(await c.control.exists(keys.stream, keys.cancel)).toBe(0);
  });
});
