/**
 * Serves the partitions of runs decided in partitions (the partition queue) in every worker process,
 * beside the command worker and the shard worker, with slots of its own: a partition's job lives as
 * long as its run. A job claims its partition (a token with a TTL, partition-host.ts) and decides it in
 * a thread until the run ends; a job whose partition another holds ends at once, and so does one whose
 * partition does not fit in the process's memory limit beside what it holds (its run's process, which
 * planned room for every partition, decides it). A graceful close gives its partitions back, so that
 * their runs take them over at their next check rather than wait.
 */
import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../core/ports/logger';
import { startPartitionThread, type StartPartition } from '../core/aggregation/partition-thread';
import { cgroupMemoryLimit } from '../core/matching/parallel/memory-limit';
import { partitionFits, threadCopyBytes } from '../core/matching/parallel/parallelism';
import { PartitionHost, openReader } from './partition-host';
import { processReservations, type PartitionReservations } from './partition-reservations';
import { partitionClaims } from './partition-claims';
import { initPartitionSeries, recordPartitionJob, type PartitionJobOutcome } from './partition-metrics';
import {
  partitionKeys,
  partitionSpace,
  readPartitionJobData,
  type PartitionJobData,
  type PartitionKeys,
} from './partition-keys';
import { CLAIM_TTL_MS } from './queue-partition-provider';
import { DEFAULT_BULL_PREFIX, partitionQueueName } from './queue-names';
import { closeConnection, closeWhileReachable } from './redis-close';
import { RedisHealth, reportWorkerError } from './redis-health';

const CLOSE_BOUND_MS = 10_000;

export interface PartitionJobWorkerOptions {
  redisUrl: string;
  redisOptions?: RedisOptions;
  prefix?: string;
  queueName?: string;
  logger: Logger;
  /** Partitions this process decides at once (each a thread). */
  concurrency: number;
  claimTtlMs?: number;
  /** Bytes this process may use; default its container's memory limit (none: every partition fits). */
  memoryLimit?: number;
  /** What this process uses now; default its resident size. */
  usedBytes?: () => number;
  /** What the partitions of this process may grow to; default the process's one ledger. */
  reservations?: PartitionReservations;
  /** A partition's engine; default a thread. */
  startPartition?: StartPartition;
  /** Tests: answers lost as failed writes (partition-host.ts). */
  loses?: (part: number, seq: number) => boolean;
  redisHealth?: RedisHealth;
}

export class PartitionJobWorker {
  readonly worker: Worker<PartitionJobData>;
  private readonly redis: Redis;
  private readonly bull: Redis;
  /** The partitions this process decides now, and their ends. */
  private readonly hosts = new Map<PartitionHost, Promise<unknown>>();
  private readonly reservations: PartitionReservations;
  private readonly memoryLimit: number | undefined;
  private readonly health: RedisHealth;
  private readonly space: string;
  private closing: { dies: boolean } | undefined;

  constructor(private readonly opts: PartitionJobWorkerOptions) {
    initPartitionSeries();
    this.memoryLimit = 'memoryLimit' in opts ? opts.memoryLimit : cgroupMemoryLimit();
    this.reservations = opts.reservations ?? processReservations;
    this.redis = new Redis(opts.redisUrl, { ...opts.redisOptions, maxRetriesPerRequest: 3, disconnectTimeout: 200 });
    this.bull = new Redis(opts.redisUrl, { ...opts.redisOptions, maxRetriesPerRequest: null, disconnectTimeout: 200 });
    const name = opts.queueName ?? partitionQueueName();
    const prefix = opts.prefix ?? DEFAULT_BULL_PREFIX;
    this.space = partitionSpace(prefix, name);
    this.worker = new Worker<PartitionJobData>(name, (job) => this.process(job), {
      connection: this.bull,
      prefix,
      concurrency: opts.concurrency,
    });
    this.health = opts.redisHealth ?? new RedisHealth(opts.redisUrl, opts.logger);
    this.health.watch(this.redis);
    this.health.watch(this.bull);
    this.worker.on('error', (e: unknown) => reportWorkerError(e, this.health, opts.logger, 'partition worker'));
  }

  private async process(job: Job<PartitionJobData>): Promise<string> {
    try {
      const outcome = await this.decide(job);
      recordPartitionJob(outcome === 'closing' ? 'stopped' : outcome);
      return outcome;
    } catch (e) {
      recordPartitionJob('failed');
      throw e;
    }
  }

  private async decide(job: Job<PartitionJobData>): Promise<PartitionJobOutcome | 'closing'> {
    const { runId, part, records } = readPartitionJobData(job.data);
    if (this.closing) return 'closing';
    const keys = partitionKeys(this.space, runId);
    if (!(await this.redis.exists(keys.meta))) return 'run_gone';
    // Reserved before the next await: jobs taken at once never share the same room.
    const bytes = threadCopyBytes(records);
    if (!this.fits(bytes, records, runId, part)) return 'no_room';
    const release = this.reservations.reserve(bytes);
    try {
      return await this.host(keys, runId, part);
    } finally {
      release();
    }
  }

  private async host(keys: PartitionKeys, runId: string, part: number): Promise<PartitionJobOutcome | 'closing'> {
    const claimTtlMs = this.opts.claimTtlMs ?? CLAIM_TTL_MS;
    const token = randomUUID();
    // Another process decides it (the run took it over, or an earlier attempt of this job runs still).
    if (!(await partitionClaims(this.redis).acquire(keys.claim(part), token, claimTtlMs))) return 'held';
    const reader = openReader(this.opts.redisUrl, this.opts.redisOptions);
    this.health.watch(reader);
    const host = new PartitionHost(
      {
        redis: this.redis,
        reader,
        startPartition: this.opts.startPartition ?? startPartitionThread,
        space: this.space,
        claimTtlMs,
        ...(this.opts.loses ? { loses: this.opts.loses } : {}),
      },
      runId,
      part,
      token,
    );
    // Claimed as the process began to stop: given back at once (the host releases its claim).
    const closing = this.closingState();
    if (closing) host.stop(!closing.dies);
    const running = host.run();
    this.hosts.set(host, running);
    try {
      return await running;
    } finally {
      this.hosts.delete(host);
    }
  }

  /**
   * Whether a partition of `bytes` fits in this process's memory limit beside what it uses now and what
   * the partitions it decides (jobs and its runs' takeovers) may grow to, counted in full: conservative,
   * as what they hold already is resident too. One that does not is left to its run's process, which
   * planned room for it. The process's own runs count by their resident size only.
   */
  private fits(bytes: number, records: number, runId: string, part: number): boolean {
    if (this.memoryLimit === undefined) return true;
    const used = (this.opts.usedBytes ?? (() => process.memoryUsage.rss()))() + this.reservations.total;
    if (partitionFits(bytes, used, this.memoryLimit)) return true;
    const mib = (b: number): string => Math.round(b / 2 ** 20).toLocaleString('en-US');
    this.opts.logger.info(
      { runId, partition: part },
      `Matching partition ${part} of run ${runId} is left to its run's process: its ${records.toLocaleString('en-US')} records need about ${mib(bytes)} MiB, and this process uses ${mib(used)} MiB of its ${mib(this.memoryLimit)} MiB memory limit`,
    );
    return false;
  }

  /** Read anew after each await (a close may have begun meanwhile). */
  private closingState(): { dies: boolean } | undefined {
    return this.closing;
  }

  /**
   * Gives its partitions back and stops. `dies` (tests): stops as a killed process does, the claims
   * left to lapse.
   */
  async close(dies = false): Promise<void> {
    this.closing ??= { dies };
    for (const h of this.hosts.keys()) h.stop(!dies);
    await closeWhileReachable(this.worker.close(dies || this.bull.status !== 'ready'), this.bull, CLOSE_BOUND_MS);
    // Their threads exit and their connections close however the jobs ended (bounded: a job still
    // claiming stops as soon as it has claimed).
    await Promise.race([
      Promise.allSettled([...this.hosts.values()]),
      new Promise((r) => setTimeout(r, CLOSE_BOUND_MS).unref()),
    ]);
    await Promise.all([this.redis, this.bull].map((c) => closeConnection(c)));
  }
}
