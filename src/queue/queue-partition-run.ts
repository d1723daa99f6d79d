/**
 * The owner's side of one run decided in partitions across worker processes (issue 27). Each partition
 * is a job on the partition queue that any worker process takes (partition-job-worker.ts); what the run
 * tells a partition goes to the partition's inbound stream, what partitions answer comes back through
 * the run's outbound stream, read here on a connection of its own.
 *
 * Every `checkMs` the run refreshes its keys and claims the partitions nobody holds: none took the job
 * yet (every slot busy: the run never waits on other runs' partitions), or the process that did stopped
 * or died (its claim lapsed). It decides those itself (a PartitionHost in this process), replaying their
 * streams; what the replay says again is dropped by number, so a run completes with the same output
 * whoever decided its partitions.
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { PartitionOutput, PartitionStart } from '../core/aggregation/partition-decisions';
import type { PartitionThread, StartPartition } from '../core/aggregation/partition-thread';
import type { PartitionRun } from '../core/aggregation/partition-provider';
import { FusionError, errorMessage } from '../core/errors';
import { PartitionHost, type PartitionHostDeps } from './partition-host';
import {
  PARTITION_KEY_TTL_MS,
  partitionJobId,
  partitionKeys,
  type PartitionJobData,
  type PartitionKeys,
} from './partition-keys';
import {
  FIELD,
  decodeOutbound,
  encodeMessage,
  streamEntries,
  type HostInbound,
  type HostOutbound,
} from './partition-messages';
import { recordTakeover } from './partition-metrics';
import type { PartitionReservations } from './partition-reservations';
import { threadCopyBytes } from '../core/matching/parallel/parallelism';
import { partitionClaims } from './partition-claims';
import type { RunLock } from '../core/ports/run-lock';
import { closeConnection } from './redis-close';

/** Baseline records per inbound message. */
const CHUNK = 5_000;
const BLOCK_MS = 5_000;
/** Takeovers of one partition that brought no answer: then it cannot answer (a write that always fails). */
const MAX_FRUITLESS_TAKEOVERS = 3;
/** Checks in a row that could not reach Redis (30 s at the default 2 s): then the partitions cannot be kept. */
const MAX_FAILED_CHECKS = 15;

export interface PartitionRunDeps {
  redis: Redis;
  queue: Queue<PartitionJobData>;
  /** A new connection for blocking reads (the run's outbound stream, partitions it takes over). */
  connect: () => Redis;
  /** How a partition taken over runs in this process: a thread. */
  startThread: StartPartition;
  /** The partition queue's key space (partitionSpace()). */
  space: string;
  claimTtlMs: number;
  checkMs: number;
  blockMs?: number;
  /** Tests: answers lost as failed writes (partition-host.ts). */
  loses?: PartitionHostDeps['loses'];
  /** What partitions taken over reserve in this process's memory (the job worker weighs it). */
  reservations: PartitionReservations;
}

interface Part {
  out: PartitionOutput;
  onEnd: (error: Error) => void;
  /** The number of the next message the run takes from it. */
  next: number;
  closed: boolean;
  /** Decided in this process (taken over), and its end. */
  host?: PartitionHost;
  hosted?: Promise<unknown>;
  /** Takeovers in a row after which it said nothing new, and `next` at the last one. */
  fruitless: number;
  nextAtTakeover: number;
  /** Its baseline records: what a takeover reserves in this process (partition-reservations.ts). */
  records: number;
}

export class QueuePartitionRun {
  private readonly keys: PartitionKeys;
  private readonly claims: RunLock;
  private readonly parts: Part[] = [];
  private began = false;
  private ending: Promise<void> | undefined;
  private reader: Redis | undefined;
  private reading: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private failedChecks = 0;
  /** Jobs not yet queued; once none, when the last was (the worker processes' grace counts from it). */
  private queuing = 0;
  private queuedAt = 0;

  constructor(
    private readonly deps: PartitionRunDeps,
    private readonly run: PartitionRun,
  ) {
    this.keys = partitionKeys(deps.space, run.runId);
    this.claims = partitionClaims(deps.redis);
  }

  readonly start: StartPartition = (start, out, onEnd) => {
    if (this.ending) throw new FusionError('MATCHING_PARTITION_FAILED', "the run's partitions have ended");
    this.begin();
    const part = this.parts.length;
    const { baseline, ...rest } = start satisfies PartitionStart;
    this.parts.push({ out, onEnd, next: 0, closed: false, fruitless: 0, nextAtTakeover: 0, records: baseline.length });
    this.send(part, { type: 'start', start: rest });
    // From its first write: a run whose process dies before its first check leaves nothing for good.
    this.deps.redis.pexpire(this.keys.inbound(part), PARTITION_KEY_TTL_MS).catch(() => 0);
    for (let i = 0; i < baseline.length; i += CHUNK)
      this.send(part, { type: 'baseline', records: baseline.slice(i, i + CHUNK) });
    this.queuing++;
    this.deps.queue
      .add(
        'partition',
        { runId: this.run.runId, part, records: baseline.length },
        { jobId: partitionJobId(this.run.runId, part), removeOnComplete: true, removeOnFail: true },
      )
      .then(
        () => undefined,
        (e: unknown) => this.fail(part, e),
      )
      .finally(() => {
        if (--this.queuing === 0) this.queuedAt = Date.now();
      });
    const thread: PartitionThread = {
      take: (work) => this.send(part, { type: 'work', work }),
      import: (batch, records) => this.send(part, { type: 'import', batch, records }),
      close: () => this.close(part),
    };
    return thread;
  };

  private begin(): void {
    if (this.began) return;
    this.began = true;
    const { redis } = this.deps;
    redis.set(this.keys.meta, '1', 'PX', PARTITION_KEY_TTL_MS).catch(() => undefined);
    this.reader = this.deps.connect();
    this.reading = this.read(this.reader);
    // Takeovers wait `checkMs` after the jobs are queued: the worker processes' grace to take them.
    this.timer = setInterval(() => void this.check(), this.deps.checkMs);
  }

  private send(part: number, m: HostInbound): void {
    const key = this.keys.inbound(part);
    this.deps.redis.xadd(key, '*', FIELD, encodeMessage(m)).catch((e: unknown) => this.fail(part, e));
  }

  /** The run fails at its next wait for the partition (the others are stopped: planned-matcher.ts). */
  private fail(part: number, e: unknown, what = 'could not hand it its work'): void {
    const p = this.parts[part];
    if (!p || p.closed || this.ending) return;
    p.onEnd(new FusionError('MATCHING_PARTITION_FAILED', `matching partition ${part}: ${what}: ${errorMessage(e)}`));
  }

  private async read(reader: Redis): Promise<void> {
    let last = '0';
    while (!this.ending) {
      let reply;
      try {
        reply = await reader.xreadBuffer(
          'COUNT',
          500,
          'BLOCK',
          this.deps.blockMs ?? BLOCK_MS,
          'STREAMS',
          this.keys.outbound,
          last,
        );
      } catch (e) {
        if (this.ending) return;
        this.parts.forEach((_, part) => this.fail(part, e, "the run's answers could not be read"));
        return;
      }
      const entries = streamEntries(reply as Parameters<typeof streamEntries>[0]);
      for (const [id, bytes] of entries) {
        last = id;
        let m: HostOutbound;
        try {
          m = decodeOutbound(bytes);
        } catch (e) {
          // Not an answer this release can read (another Node's serialization, a damaged entry).
          this.parts.forEach((_, part) => this.fail(part, e, 'an answer could not be read'));
          return;
        }
        this.receive(m);
      }
      // Read once is enough (a replay says again what it needs): Redis holds only what is unread.
      if (entries.length > 0) this.deps.redis.xtrim(this.keys.outbound, 'MINID', last).catch(() => 0);
    }
  }

  private receive({ part, seq, message }: HostOutbound): void {
    const p = this.parts[part];
    if (!p || p.closed) return;
    // Said before (a replay), or after a message that was lost (its host gave the partition up and
    // whoever takes it over says both again).
    if (seq !== p.next) return;
    p.next++;
    if (message.type === 'batch') p.out.decided(message.decided);
    else if (message.type === 'export') p.out.exported(message.to, message.batch, message.records);
    else p.onEnd(new FusionError('MATCHING_PARTITION_FAILED', `matching partition ${part}: ${message.message}`));
  }

  /** Refreshes the run's keys and takes over the partitions nobody holds. */
  private async check(): Promise<void> {
    if (this.checking || this.ending) return;
    this.checking = true;
    const { redis, claimTtlMs } = this.deps;
    try {
      const refresh = redis
        .pipeline()
        .pexpire(this.keys.meta, PARTITION_KEY_TTL_MS)
        .pexpire(this.keys.outbound, PARTITION_KEY_TTL_MS);
      this.parts.forEach((_, part) => refresh.pexpire(this.keys.inbound(part), PARTITION_KEY_TTL_MS));
      await refresh.exec();
      this.failedChecks = 0;
      if (this.queuing > 0 || Date.now() - this.queuedAt < this.deps.checkMs) return;
      for (let part = 0; part < this.parts.length; part++) {
        const p = this.parts[part]!;
        if (p.closed || p.host || this.ending) continue;
        const token = randomUUID();
        if (!(await this.claims.acquire(this.keys.claim(part), token, claimTtlMs))) continue;
        if (this.ending) break;
        this.takeOver(part, p, token);
      }
    } catch (e) {
      // Redis away: the next check tries again, until the partitions cannot be kept.
      if (++this.failedChecks >= MAX_FAILED_CHECKS)
        this.parts.forEach((_, part) =>
          this.fail(part, e, `Redis did not answer ${MAX_FAILED_CHECKS} checks in a row`),
        );
    } finally {
      this.checking = false;
    }
  }

  private takeOver(part: number, p: Part, token: string): void {
    const { deps } = this;
    p.fruitless = p.next > p.nextAtTakeover || p.fruitless === 0 ? 1 : p.fruitless + 1;
    p.nextAtTakeover = p.next;
    if (p.fruitless > MAX_FRUITLESS_TAKEOVERS) {
      void deps.redis.del(this.keys.claim(part)).catch(() => 0);
      return this.fail(
        part,
        new Error('its answers cannot be written'),
        `it said nothing new over ${MAX_FRUITLESS_TAKEOVERS} takeovers`,
      );
    }
    recordTakeover();
    this.run.logger.info(
      { partition: part },
      `Matching partition ${part} is decided in this process: no other worker process holds it (none took it yet, or the one that did stopped)`,
    );
    const host = new PartitionHost(
      {
        redis: deps.redis,
        reader: deps.connect(),
        startPartition: deps.startThread,
        space: deps.space,
        claimTtlMs: deps.claimTtlMs,
        ...(deps.blockMs ? { blockMs: deps.blockMs } : {}),
        ...(deps.loses ? { loses: deps.loses } : {}),
      },
      this.run.runId,
      part,
      token,
    );
    p.host = host;
    const release = deps.reservations.reserve(threadCopyBytes(p.records));
    p.hosted = host
      .run()
      .then(
        () => {
          if (p.host === host) delete p.host;
        },
        (e: unknown) => {
          if (p.host === host) delete p.host;
          this.fail(part, e, 'it failed in this process');
        },
      )
      .finally(release);
  }

  private close(part: number): Promise<void> {
    const p = this.parts[part];
    if (p) p.closed = true;
    if (this.parts.every((q) => q.closed)) this.ending ??= this.end();
    return this.ending ?? Promise.resolve();
  }

  /** Tells every partition the run ended, then deletes the run's keys and the jobs not yet taken. */
  private async end(): Promise<void> {
    clearInterval(this.timer);
    const { redis, queue } = this.deps;
    for (const p of this.parts) p.host?.stop(true);
    try {
      const told = redis.pipeline();
      this.parts.forEach((_, part) => told.xadd(this.keys.inbound(part), '*', FIELD, encodeMessage({ type: 'end' })));
      await told.exec();
      await redis.del(this.keys.meta);
      await Promise.all(this.parts.map((_, part) => queue.remove(partitionJobId(this.run.runId, part)).catch(() => 0)));
      const keys = [this.keys.outbound];
      this.parts.forEach((_, part) => keys.push(this.keys.inbound(part), this.keys.claim(part)));
      await redis.del(...keys);
    } catch {
      // Redis away: the keys expire (PARTITION_KEY_TTL_MS), and hosts stop once the meta key is gone.
    }
    if (this.reader) await closeConnection(this.reader, 200);
    await Promise.all([this.reading, ...this.parts.map((p) => p.hosted)]);
  }
}
