import { Worker, type Job } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import type { CommandRunner } from '../core/command-runner';
import { FusionError, errorMessage } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import type { ProxyCommand } from '../dispatch/command-dispatcher';
import type { CommandLane } from '../dispatch/command-lanes';
import { executeCommand, toFusionError } from '../dispatch/command-execution';
import { initJobSeries } from '../dispatch/metrics';
import { initErrorSeries } from '../observability/error-metrics';
import { closeConnection, whileTrue } from './redis-close';
import { RedisHealth, reportWorkerError } from './redis-health';
import type { JobCrypto } from './job-crypto';
import { openCommand, type CommandJobData } from './job-data';
import { DEFAULT_BULL_PREFIX, DEFAULT_QUEUE_NAME, laneQueueName } from './queue-names';
import { LAPSE_CONFIRM_MS, LeaseLapse } from './lease-lapse';
import { READER_LEASE_MS, resultKeys } from './result-keys';
import { ResultStreamWriter, type ResultStreamWriterOptions } from './result-stream-writer';

export interface CommandWorkerOptions {
  redisUrl: string;
  /** Credentials and TLS of every connection (see server/redis-settings.ts). */
  redisOptions?: RedisOptions;
  runner: CommandRunner;
  crypto: JobCrypto;
  logger: Logger;
  /** Long commands (aggregations, entitlement lists) run at once. */
  concurrency: number;
  /** Quick commands run at once, in slots of their own (dispatch/command-lanes.ts). */
  quickConcurrency: number;
  /** The configured queue name: the long lane's queue and the key of every result stream. */
  queueName?: string;
  prefix?: string;
  /** How often running jobs' cancel keys are checked. */
  cancelPollMs?: number;
  /** Stream tuning; see ResultStreamWriterOptions. */
  stream?: Partial<Omit<ResultStreamWriterOptions, 'signal'>>;
  /** BullMQ lock tuning (defaults 30 s each): how soon a dead worker's job is noticed. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** The process's view of Redis (shared with an api in the same process); one of its own otherwise. */
  redisHealth?: RedisHealth;
  /** Told the number of commands running whenever it changes (the pod's deletion cost). */
  onRunningChange?: (running: number) => void;
}

interface RunningJob {
  controller: AbortController;
  cancelKey: string;
  /** The api's reader lease (jobs queued with one): when it lapses, the api is gone. */
  readerKey: string | undefined;
  lease: LeaseLapse;
  writer: ResultStreamWriter;
  cancelledByApi: boolean;
}

/** Why the worker stopped a running job on the api's behalf: the reader hears it (if it still reads). */
const CANCELLED_BY_API = (): FusionError =>
  new FusionError('COMMAND_CANCELLED', 'the command was cancelled by the api: its client left or its wait timed out');
const READER_GONE = (): FusionError =>
  new FusionError(
    'COMMAND_CANCELLED',
    `the worker stopped the command because the api reading its result stopped renewing its reader lease (for more than ${READER_LEASE_MS / 1000} s, while Redis answered): the api is gone; nothing after the stop was committed; run the command again`,
  );

const DEFAULT_STREAM_OPTIONS: Omit<ResultStreamWriterOptions, 'signal'> = {
  chunkBytes: 64 * 1024,
  lingerMs: 5,
  maxBacklogEntries: 32,
  maxWritesInFlight: 4,
  ttlMs: 10 * 60 * 1000,
  endTtlMs: 60 * 1000,
  progressIntervalMs: 1000,
  readerIdleTimeoutMs: 5 * 60 * 1000,
};

/** Consumer side of the command queue: runs each job through the CommandRunner into its result stream. */
export class CommandWorker {
  /** The long lane's BullMQ worker. */
  readonly worker: Worker<CommandJobData>;
  /** The quick lane's: a test connection never waits behind aggregations. */
  readonly quickWorker: Worker<CommandJobData>;
  private readonly bullConnection: Redis;
  /** Separate from BullMQ's connections so result writes never wait behind its blocking calls. */
  private readonly streamConnection: Redis;
  private readonly running = new Map<string, RunningJob>();
  private readonly pollTimer: NodeJS.Timeout;
  private readonly streamOptions: Omit<ResultStreamWriterOptions, 'signal'>;
  private readonly queueName: string;
  private readonly health: RedisHealth;
  private polling = false;

  constructor(private readonly opts: CommandWorkerOptions) {
    initJobSeries();
    initErrorSeries('worker');
    this.queueName = opts.queueName ?? DEFAULT_QUEUE_NAME;
    this.streamOptions = { ...DEFAULT_STREAM_OPTIONS, ...opts.stream };
    this.bullConnection = new Redis(opts.redisUrl, {
      ...opts.redisOptions,
      maxRetriesPerRequest: null,
      disconnectTimeout: 200,
    });
    const health = opts.redisHealth ?? new RedisHealth(opts.redisUrl, opts.logger);
    this.health = health;
    health.watch(this.bullConnection);
    this.streamConnection = new Redis(opts.redisUrl, {
      ...opts.redisOptions,
      maxRetriesPerRequest: 3,
      disconnectTimeout: 200,
    });
    health.watch(this.streamConnection);
    const laneWorker = (lane: CommandLane, concurrency: number): Worker<CommandJobData> => {
      const w = new Worker<CommandJobData>(laneQueueName(lane, this.queueName), (job) => this.process(job), {
        connection: this.bullConnection,
        prefix: opts.prefix ?? DEFAULT_BULL_PREFIX,
        concurrency,
        ...(opts.lockDurationMs !== undefined ? { lockDuration: opts.lockDurationMs } : {}),
        ...(opts.stalledIntervalMs !== undefined ? { stalledInterval: opts.stalledIntervalMs } : {}),
      });
      // BullMQ's worker errors: a Redis call failing is reported with the connections', once; a job's
      // own trouble as such.
      w.on('error', (e: unknown) => reportWorkerError(e, health, opts.logger, 'command worker'));
      return w;
    };
    this.worker = laneWorker('long', opts.concurrency);
    this.quickWorker = laneWorker('quick', opts.quickConcurrency);
    this.pollTimer = setInterval(() => void this.pollCancellations(), opts.cancelPollMs ?? 250);
    this.pollTimer.unref();
  }

  private async process(job: Job<CommandJobData>): Promise<void> {
    const jobId = job.id ?? '';
    const keys = resultKeys(this.queueName, jobId);
    const controller = new AbortController();
    // The api withdraws a job whose queuing it reported as failed (503: not run) or whose client
    // left; if a worker took it first, it must not start it.
    const readerKey = job.data.lease ? keys.reader : undefined;
    const checks = Promise.all([
      this.streamConnection.exists(keys.cancel).then(
        (n) => n === 1,
        () => false,
      ),
      readerKey
        ? this.streamConnection.exists(readerKey).then(
            (n) => n === 0,
            () => false,
          )
        : false,
    ]);
    // Opened while the checks travel (it has no effect of its own); what failed is reported only if the job may start.
    let opened: { cmd: ProxyCommand } | { error: FusionError };
    try {
      opened = { cmd: openCommand(job.data, jobId, this.opts.crypto) };
    } catch (e) {
      opened = { error: toFusionError(e) };
    }
    const [cancelled, leaseMissing] = await checks;
    // A lease missing at the start may be one that lapsed while Redis stalled: give the api its renewal.
    const readerGone = !cancelled && leaseMissing && readerKey ? await this.leaseStillMissing(readerKey) : false;
    if (cancelled || readerGone) {
      await this.streamConnection.del(keys.stream, keys.cancel).catch(() => undefined);
      this.opts.logger.info(
        { jobId },
        cancelled
          ? 'job withdrawn by the api before it started; not run'
          : 'the api that queued this job is gone (reader lease lapsed); not run',
      );
      return;
    }
    const writer = new ResultStreamWriter(this.streamConnection, keys, {
      ...this.streamOptions,
      signal: controller.signal,
    });
    const entry: RunningJob = {
      controller,
      cancelKey: keys.cancel,
      readerKey,
      lease: new LeaseLapse(),
      writer,
      cancelledByApi: false,
    };
    this.running.set(jobId, entry);
    this.opts.onRunningChange?.(this.running.size);
    try {
      writer.start();
      if (job.attemptsStarted > 1) {
        // Output may already have reached the client from the lost attempt: fail rather than duplicate it.
        await writer.fail(
          new FusionError('PROXY_SERVER_ERROR', 'the worker running this command stopped; run the command again'),
        );
        return;
      }
      if ('error' in opened) {
        await writer.fail(opened.error);
        return;
      }
      await executeCommand(this.opts.runner, opened.cmd, writer, {
        signal: controller.signal,
        logger: this.opts.logger,
        component: 'worker',
      });
    } finally {
      this.running.delete(jobId);
      this.opts.onRunningChange?.(this.running.size);
      // Nobody reads a stream the api gave up on: drop it now instead of waiting for its TTL.
      if (entry.cancelledByApi)
        await this.streamConnection.del(keys.stream, keys.cancel, keys.reader).catch(() => undefined);
      else await writer.dropIfWithdrawn().catch(() => undefined);
    }
  }

  /** Checks a missing lease again a renewal period later (see LeaseLapse); true when it is still missing. */
  private async leaseStillMissing(readerKey: string): Promise<boolean> {
    const lease = new LeaseLapse();
    lease.observe(false, performance.now(), performance.now());
    await new Promise((r) => setTimeout(r, LAPSE_CONFIRM_MS));
    for (;;) {
      const sentAt = performance.now();
      const exists = await this.streamConnection.exists(readerKey).catch(() => undefined);
      // Redis does not answer: the job cannot run anyway; let it start and fail on its own terms.
      if (exists === undefined) return false;
      if (exists === 1) return false;
      if (lease.observe(false, sentAt, performance.now())) return true;
      await new Promise((r) => setTimeout(r, LAPSE_CONFIRM_MS));
    }
  }

  private async pollCancellations(): Promise<void> {
    // One poll at a time: while Redis stalls, polls would otherwise pile up and all answer at once.
    if (this.running.size === 0 || this.polling) return;
    this.polling = true;
    const jobs = [...this.running.entries()];
    try {
      const pipeline = this.streamConnection.pipeline();
      // One reply per key: cancel, then (for jobs with a lease) the reader lease.
      for (const [, j] of jobs) {
        pipeline.exists(j.cancelKey);
        if (j.readerKey) pipeline.exists(j.readerKey);
      }
      const sentAt = performance.now();
      const replies = (await pipeline.exec()) ?? [];
      const answeredAt = performance.now();
      let r = 0;
      for (const [jobId, job] of jobs) {
        const [cancelErr, cancel] = replies[r++] ?? [null, 0];
        const [leaseErr, lease] = job.readerKey ? (replies[r++] ?? [null, 1]) : [null, 1];
        // Finished (its end entry is out): the api drops its lease as soon as it has read it.
        if (job.writer.finished || job.controller.signal.aborted) continue;
        if (!cancelErr && cancel === 1) {
          job.cancelledByApi = true;
          job.controller.abort(CANCELLED_BY_API());
        } else if (!leaseErr && job.lease.observe(lease !== 0, sentAt, answeredAt)) {
          this.opts.logger.warn(
            { jobId },
            'the api reading this running job is gone (its reader lease lapsed and was not renewed while Redis answered); stopping the job',
          );
          job.cancelledByApi = true;
          job.controller.abort(READER_GONE());
        }
      }
    } catch (e) {
      this.opts.logger.debug({ err: errorMessage(e) }, 'cancel poll failed');
    } finally {
      this.polling = false;
    }
  }

  readonly mode = 'worker';

  /** For /readyz on worker-only pods. */
  async ready(): Promise<{ ok: boolean; reason?: string }> {
    if (this.streamConnection.status !== 'ready')
      return { ok: false, reason: `redis connection is ${this.streamConnection.status}` };
    return { ok: true };
  }

  /** Jobs running now (tests). */
  get activeJobs(): number {
    return this.running.size;
  }

  /**
   * Stops taking jobs and lets running ones finish; after `graceMs` their runners are
   * aborted (each stream then gets an error entry) so shutdown always completes. BullMQ's
   * close() never resolves while Redis is unreachable, so it is never awaited unbounded.
   */
  async close(graceMs = 30_000): Promise<void> {
    clearInterval(this.pollTimer);
    const sleep = (ms: number): Promise<'timeout'> => new Promise((r) => setTimeout(() => r('timeout'), ms).unref());
    const force = this.bullConnection.status !== 'ready';
    const closing = Promise.all([this.worker.close(force), this.quickWorker.close(force)]).then(
      () => 'closed' as const,
    );
    closing.catch(() => undefined);
    // With Redis away BullMQ's close never resolves: once no job runs there is nothing to wait for.
    const idleWithoutRedis = whileTrue(() => this.running.size > 0 || this.bullConnection.status === 'ready').then(
      () => 'idle' as const,
    );
    if ((await Promise.race([closing, idleWithoutRedis, sleep(graceMs)])) === 'timeout') {
      // The api answers with this error (503, or an aborted stream after the first byte): the
      // caller learns the command did not finish and can run it again. Output already streamed
      // cannot be taken back, so the job is failed, never handed to another worker.
      const reason = new FusionError(
        'SERVER_SHUTTING_DOWN',
        `the worker running this command shut down before it finished (SHUTDOWN_GRACE_MS = ${graceMs} ms); run the command again`,
      );
      for (const j of this.running.values()) j.controller.abort(reason);
      const end = Date.now() + 2000;
      while (this.running.size > 0 && Date.now() < end) await sleep(20);
      await Promise.race([closing, sleep(500)]);
    }
    this.health.stop();
    await Promise.all([this.bullConnection, this.streamConnection].map((r) => closeConnection(r)));
  }
}
