/**
 * The owner's side of one sharded run: its baseline goes to Redis once (a list of binary chunks, in
 * the order of addBaseline), each block() becomes a child job on the shard queue and its slice comes
 * back through a result key. Every shard the run's matcher starts shares this object: the parallel
 * matcher hands each of them the same columns object, so one write serves them all.
 */
import type { Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { FusionError, errorMessage } from '../core/errors';
import type { BlockedSlice } from '../core/matching/blocked-slice';
import type { RecordColumns } from '../core/matching/parallel/record-columns';
import type { Shard } from '../core/matching/parallel/shard';
import type { ShardRun } from '../core/matching/parallel/shard-provider';
import type { MatchingSettings } from '../core/matching/types';
import { decodeSlice, encodeColumns, encodeRecordNumbers } from './shard-codec';
import type { ShardJobData } from './shard-job-data';
import { SHARD_KEY_TTL_MS, shardJobId, shardKeys, type ShardKeys } from './shard-keys';

export interface ShardRunDeps {
  redis: Redis;
  queue: Queue<ShardJobData>;
  events: QueueEvents;
  /** Attempts of a child job: a retry (after an error or a dead worker) writes the same slice key. */
  attempts: number;
}

export class QueueShardRun {
  private readonly keys: ShardKeys;
  private started = false;
  private closed = false;
  private closing?: Promise<void>;
  /** Baseline chunks written (what a child must load before it blocks). */
  private chunks = 0;
  private lastBaseline?: RecordColumns;
  private lastExcluded?: Int32Array;
  private lastNew?: RecordColumns;
  /** Calls numbered so far (held blocks are calls of their own); the call of lastNew's children. */
  private call = -1;
  private newCall = -1;
  private part = 0;
  /** Most children any call had: the slice keys end() deletes. */
  private parts = 0;
  /** Writes in flight; block() waits for them so a child never reads ahead of the owner. */
  private writes: Promise<unknown> = Promise.resolve();
  private writeError?: unknown;
  /** Child jobs not yet returned (the waiting ones are removed when the run ends early). */
  private readonly jobs = new Set<string>();
  /** Children of the current call not yet returned; at 0 its new records are deleted. */
  private pending = 0;

  constructor(
    private readonly deps: ShardRunDeps,
    private readonly run: ShardRun,
  ) {
    this.keys = shardKeys(run.runId);
  }

  /** A shard of this run; its close() ends the whole run's shards (they end together anyway). */
  shard(settings: MatchingSettings): Shard {
    if (!this.started) {
      this.started = true;
      // The children's only view of the configuration: the matching settings (no credentials in them).
      this.write(this.deps.redis.set(this.keys.meta, JSON.stringify(settings), 'PX', SHARD_KEY_TTL_MS));
    }
    return {
      addBaseline: (cols) => this.addBaseline(cols),
      block: (cols, from, to) => this.block(cols, from, to),
      blockHeld: (from, to) => this.blockHeld(from, to),
      exclude: (records) => this.exclude(records),
      close: () => this.close(),
    };
  }

  private write(p: Promise<unknown>): void {
    const caught = p.catch((e: unknown) => {
      this.writeError ??= e;
    });
    this.writes = Promise.all([this.writes, caught]);
  }

  private addBaseline(cols: RecordColumns): void {
    if (this.closed || cols === this.lastBaseline) return;
    this.lastBaseline = cols;
    this.chunks++;
    const { redis } = this.deps;
    this.write(redis.rpush(this.keys.baseline, encodeColumns(cols)));
    this.write(redis.pexpire(this.keys.baseline, SHARD_KEY_TTL_MS));
  }

  /** For the children that block held records from now on (they read the list before blocking). */
  private exclude(records: Int32Array): void {
    if (this.closed || records === this.lastExcluded) return;
    this.lastExcluded = records;
    const { redis } = this.deps;
    this.write(redis.rpush(this.keys.excluded, encodeRecordNumbers(records)));
    this.write(redis.pexpire(this.keys.excluded, SHARD_KEY_TTL_MS));
  }

  private async block(cols: RecordColumns, from: number, to: number): Promise<BlockedSlice> {
    if (this.closed) throw new FusionError('MATCHING_SHARD_FAILED', 'the sharded run has ended');
    const { redis } = this.deps;
    if (cols !== this.lastNew) {
      // A new call: its records once, for all of its children.
      this.lastNew = cols;
      this.newCall = ++this.call;
      this.part = 0;
      this.write(redis.set(this.keys.newRecords(this.newCall), encodeColumns(cols), 'PX', SHARD_KEY_TTL_MS));
      this.write(redis.pexpire(this.keys.meta, SHARD_KEY_TTL_MS));
      this.write(redis.pexpire(this.keys.baseline, SHARD_KEY_TTL_MS));
    }
    const call = this.newCall;
    const part = this.part++;
    this.parts = Math.max(this.parts, this.part);
    this.pending++;
    try {
      return await this.child({ runId: this.run.runId, call, part, chunks: this.chunks, from, to });
    } finally {
      if (--this.pending === 0) void redis.del(this.keys.newRecords(call)).catch(() => undefined);
    }
  }

  /** Records from..to-1 of the stored baseline, each against the records before it: a call of its own, one child. */
  private async blockHeld(from: number, to: number): Promise<BlockedSlice> {
    if (this.closed) throw new FusionError('MATCHING_SHARD_FAILED', 'the sharded run has ended');
    // A number of its own among the calls: its slice key.
    const call = ++this.call;
    this.parts = Math.max(this.parts, 1);
    return this.child({ runId: this.run.runId, call, part: 0, chunks: this.chunks, from, to, held: true });
  }

  /** One child job: queued once the records it reads are stored, awaited, its slice read and deleted. */
  private async child(data: ShardJobData): Promise<BlockedSlice> {
    const { redis, queue, events, attempts } = this.deps;
    await this.writes;
    if (this.writeError !== undefined)
      throw new FusionError(
        'MATCHING_SHARD_FAILED',
        `could not store the run's records for its matching child jobs: ${errorMessage(this.writeError)}`,
      );
    const ended = (): FusionError => new FusionError('MATCHING_SHARD_FAILED', 'the sharded run has ended');
    if (this.closed) throw ended();
    const { call, part } = data;
    const jobId = shardJobId(this.run.runId, call, part);
    // Until it has finished: a run that ends (a cancel among them) removes it from the queue.
    this.jobs.add(jobId);
    const job = await queue.add('block', data, {
      jobId,
      attempts,
      backoff: { type: 'fixed', delay: 500 },
      removeOnComplete: true,
      removeOnFail: true,
    });
    if (this.closed) {
      // Queued while the run ended: end() may have passed it by.
      await queue.remove(jobId).catch(() => 0);
      throw ended();
    }
    await this.finished(job, events);
    this.jobs.delete(jobId);
    const buf = await redis.getBuffer(this.keys.slice(call, part));
    if (!buf)
      throw new FusionError(
        'MATCHING_SHARD_FAILED',
        `matching child job ${jobId} finished without its slice (the run's keys expired or were removed)`,
      );
    void redis.del(this.keys.slice(call, part)).catch(() => undefined);
    return decodeSlice(buf);
  }

  /** Waits for the child through QueueEvents (a blocking read, no polling); the run's cancel ends the wait. */
  private async finished(job: Job<ShardJobData>, events: QueueEvents): Promise<void> {
    const { signal } = this.run;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new FusionError('COMMAND_CANCELLED', 'the aggregation was cancelled'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([job.waitUntilFinished(events), aborted]);
    } catch (e) {
      if (e instanceof FusionError) throw e;
      // A completed child removed before the check reads as "missing": its slice key tells.
      if (await this.deps.redis.exists(this.keys.slice(job.data.call, job.data.part))) return;
      throw new FusionError('MATCHING_SHARD_FAILED', `matching child job ${job.id} failed: ${errorMessage(e)}`, {
        jobId: job.id,
      });
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /** Deletes the run's keys (meta first: a child still running then writes nothing) and its waiting children. */
  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  private async end(): Promise<void> {
    this.closed = true;
    if (!this.started) return;
    await this.writes;
    const { redis, queue } = this.deps;
    await Promise.all([...this.jobs].map((id) => queue.remove(id).catch(() => 0)));
    const keys = [this.keys.baseline, this.keys.excluded];
    // Slices are deleted once read, but a child that outlived its lock (its worker stalled, another
    // ran it again) may write its slice a second time, and a cancel leaves the last call's.
    for (let c = 0; c <= this.call; c++) {
      keys.push(this.keys.newRecords(c));
      for (let p = 0; p < this.parts; p++) keys.push(this.keys.slice(c, p));
    }
    // Meta first: from here on a child still running writes no slice (the result script checks it).
    await redis.del(this.keys.meta);
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  }
}
