/**
 * Serves matching child jobs (the shard queue) in every worker process, beside the command worker
 * and with its own concurrency, so an aggregation never waits on children that only its own
 * (busy) command slots could run. Per run it keeps one engine (a matching thread where the worker
 * entry ships, else in-process) holding the run's baseline as far as the children needed it: a
 * child loads the chunks its engine lacks, blocks its slice and writes it to its result key. The
 * write is a SET of the same bytes on every attempt, and only while the run's meta key exists, so
 * a retried child (its worker died) or one that ends after the run adds no output. Engines are
 * evicted when idle (IDLE_MS) or when their run is gone.
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { errorMessage } from '../core/errors';
import type { BlockedSlice } from '../core/matching/blocked-slice';
import type { Logger } from '../core/ports/logger';
import { inProcessShard, type Shard } from '../core/matching/parallel/shard';
import { workerEntryAvailable, workerShard } from '../core/matching/parallel/worker-shard';
import type { MatchingSettings } from '../core/matching/types';
import { DEFAULT_BULL_PREFIX, shardQueueName } from './queue-names';
import { closeConnection, closeWhileReachable } from './redis-close';
import { RedisHealth, reportWorkerError } from './redis-health';
import { decodeColumns, decodeRecordNumbers, encodeSlice } from './shard-codec';
import { readShardJobData, type ShardJobData } from './shard-job-data';
import { SHARD_KEY_TTL_MS, shardKeys, type ShardKeys } from './shard-keys';
import { initShardJobSeries, recordShardJob } from './shard-metrics';

const IDLE_MS = 60_000;
/** The longest a close waits for running children (a child's slice takes seconds, not minutes). */
const CLOSE_BOUND_MS = 30_000;

/** Writes the slice only while the run lives (KEYS[1] its meta, KEYS[2] the slice key). */
const WRITE_SLICE = `if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

export interface ShardJobWorkerOptions {
  redisUrl: string;
  redisOptions?: RedisOptions;
  prefix?: string;
  /** The shard queue; default shardQueueName() of the default command queue. */
  queueName?: string;
  logger: Logger;
  /** Children run at once (different runs; one run's children queue on its engine). */
  concurrency: number;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  idleMs?: number;
  /** Engine of a run; default a matching thread (or in-process without a worker entry). */
  startShard?: (settings: MatchingSettings) => Shard;
  /** The process's view of Redis: an outage is logged once (then every 60 s), not per reconnect. */
  redisHealth?: RedisHealth;
  /** Called after a slice is blocked and before it is written (tests stop a worker here). */
  beforeWrite?: (job: Job<ShardJobData>) => Promise<void>;
}

interface RunEngine {
  shard: Shard;
  loaded: number;
  /** Entries of the run's excluded list given to the shard. */
  excluded: number;
  /** Loading chunks is one at a time per run; blocking is ordered by the engine itself. */
  loading: Promise<void>;
  idle?: NodeJS.Timeout;
}

class RunEnded extends Error {}

export class ShardJobWorker {
  readonly worker: Worker<ShardJobData>;
  private readonly redis: Redis;
  private readonly bull: Redis;
  private readonly engines = new Map<string, RunEngine>();
  private readonly startShard: (settings: MatchingSettings) => Shard;

  constructor(private readonly opts: ShardJobWorkerOptions) {
    initShardJobSeries();
    this.startShard = opts.startShard ?? (workerEntryAvailable() ? workerShard : inProcessShard);
    this.redis = new Redis(opts.redisUrl, { ...opts.redisOptions, maxRetriesPerRequest: 3, disconnectTimeout: 200 });
    this.redis.defineCommand('fusionWriteSlice', { numberOfKeys: 2, lua: WRITE_SLICE });
    this.bull = new Redis(opts.redisUrl, { ...opts.redisOptions, maxRetriesPerRequest: null, disconnectTimeout: 200 });
    this.worker = new Worker<ShardJobData>(opts.queueName ?? shardQueueName(), (job) => this.process(job), {
      connection: this.bull,
      prefix: opts.prefix ?? DEFAULT_BULL_PREFIX,
      concurrency: opts.concurrency,
      ...(opts.lockDurationMs !== undefined ? { lockDuration: opts.lockDurationMs } : {}),
      ...(opts.stalledIntervalMs !== undefined ? { stalledInterval: opts.stalledIntervalMs } : {}),
    });
    // Its connections' and BullMQ's Redis errors are the process's one outage report (RedisHealth), not a line each.
    const health = opts.redisHealth ?? new RedisHealth(opts.redisUrl, opts.logger);
    health.watch(this.redis);
    health.watch(this.bull);
    this.worker.on('error', (e: unknown) => reportWorkerError(e, health, opts.logger, 'matching child worker'));
  }

  private async process(job: Job<ShardJobData>): Promise<void> {
    const t0 = performance.now();
    const seconds = (): number => (performance.now() - t0) / 1000;
    let d: ShardJobData;
    try {
      d = readShardJobData(job.data);
      const keys = shardKeys(d.runId);
      const engine = await this.load(d);
      const slice = d.held ? await engine.shard.blockHeld(d.from, d.to) : await this.blockNew(engine, d, keys);
      await this.opts.beforeWrite?.(job);
      const written = (await (
        this.redis as Redis & { fusionWriteSlice(a: string, b: string, c: Buffer, d: number): Promise<number> }
      ).fusionWriteSlice(keys.meta, keys.slice(d.call, d.part), encodeSlice(slice), SHARD_KEY_TTL_MS)) as number;
      if (written === 0) throw new RunEnded();
      this.touch(d.runId);
      recordShardJob('completed', seconds());
    } catch (e) {
      if (e instanceof RunEnded) {
        // Cancelled, failed or expired: nobody waits for this slice.
        void this.evict(job.data?.runId);
        recordShardJob('run_ended', seconds());
        return;
      }
      // A retry starts from a fresh engine: this one may hold part of a chunk or a dead thread.
      void this.evict(job.data?.runId);
      recordShardJob('failed', seconds());
      this.opts.logger.warn(
        { jobId: job.id, attempt: job.attemptsMade + 1, err: errorMessage(e) },
        'matching child job failed',
      );
      throw e instanceof UnrecoverableError ? e : new Error(errorMessage(e));
    }
  }

  private async blockNew(engine: RunEngine, d: ShardJobData, keys: ShardKeys): Promise<BlockedSlice> {
    const cols = await this.redis.getBuffer(keys.newRecords(d.call));
    if (!cols) throw new RunEnded();
    return engine.shard.block(decodeColumns(cols), d.from, d.to);
  }

  /**
   * The run's engine holding the chunks the child asks for: exactly those for a call's new records
   * (they are numbered after them), at least those for held records (later ones do not change their slice).
   */
  private async load(d: ShardJobData): Promise<RunEngine> {
    const keys = shardKeys(d.runId);
    let engine = this.engines.get(d.runId);
    if (engine && engine.loaded > d.chunks && !d.held) {
      // Holds records the owner added after this call (a late retry): start again.
      void this.evict(d.runId);
      engine = undefined;
    }
    if (!engine) {
      const meta = await this.redis.get(keys.meta);
      if (meta === null) throw new RunEnded();
      if (this.engines.has(d.runId)) engine = this.engines.get(d.runId)!;
      else {
        engine = {
          shard: this.startShard(JSON.parse(meta) as MatchingSettings),
          loaded: 0,
          excluded: 0,
          loading: Promise.resolve(),
        };
        this.engines.set(d.runId, engine);
      }
    }
    const e = engine;
    const step = e.loading.then(async () => {
      if (e.loaded < d.chunks) {
        const chunks = await this.redis.lrangeBuffer(keys.baseline, e.loaded, d.chunks - 1);
        if (chunks.length !== d.chunks - e.loaded) throw new RunEnded();
        for (const c of chunks) e.shard.addBaseline(decodeColumns(c));
        e.loaded = d.chunks;
      }
      if (d.held) await this.loadExcluded(keys, e);
    });
    e.loading = step.catch(() => undefined);
    await step;
    return e;
  }

  /**
   * The records excluded since the engine last looked, however recent: excluding more only saves
   * work (the owner drops those candidates anyway), so the child need not match the owner's moment.
   */
  private async loadExcluded(keys: ShardKeys, e: RunEngine): Promise<void> {
    const lists = await this.redis.lrangeBuffer(keys.excluded, e.excluded, -1);
    for (const l of lists) e.shard.exclude(decodeRecordNumbers(l));
    e.excluded += lists.length;
  }

  private touch(runId: string): void {
    const e = this.engines.get(runId);
    if (!e) return;
    if (e.idle) clearTimeout(e.idle);
    e.idle = setTimeout(() => void this.evict(runId), this.opts.idleMs ?? IDLE_MS).unref();
  }

  /** Resolves once the run's matching thread has exited. */
  private evict(runId: string | undefined): Promise<void> {
    const e = runId === undefined ? undefined : this.engines.get(runId);
    if (!e) return Promise.resolve();
    this.engines.delete(runId!);
    if (e.idle) clearTimeout(e.idle);
    return e.shard.close().catch(() => undefined);
  }

  /** Runs held by this worker (tests). */
  enginesHeld(): number {
    return this.engines.size;
  }

  /** force: stops without waiting for running children (their locks lapse and another worker retries them). */
  async close(force = false): Promise<void> {
    // Bounded: with Redis away BullMQ's close never resolves (and no child can write its slice anyway).
    await closeWhileReachable(this.worker.close(force || this.bull.status !== 'ready'), this.bull, CLOSE_BOUND_MS);
    // A graceful close leaves no matching thread behind (nor does a forced one, once it resolves).
    await Promise.all([...this.engines.keys()].map((id) => this.evict(id)));
    await Promise.all([this.redis, this.bull].map((c) => closeConnection(c)));
  }
}
