import type { ChainableCommander, Redis } from 'ioredis';
import { FusionError } from '../core/errors';
import { LineBatcher } from '../dispatch/line-batcher';
import type { OutputSink } from '../dispatch/output-sink';
import { ENTRY, type ResultKeys } from './result-keys';

export interface ResultStreamWriterOptions {
  /** Target bytes of NDJSON per XADD. */
  chunkBytes: number;
  /** How long a partial chunk may wait for more lines. */
  lingerMs: number;
  /** Unread entries above which the writer waits for the reader (resumes at half). */
  maxBacklogEntries: number;
  /** TTL of the stream while the command runs, refreshed by writes, progress and while waiting for the reader. */
  ttlMs: number;
  /** TTL after the end/error entry, long enough for the reader to pick it up. */
  endTtlMs: number;
  /** At most one progress entry per interval. */
  progressIntervalMs: number;
  /** How long the writer waits for the reader to make room before giving up (api gone). */
  readerIdleTimeoutMs: number;
  /**
   * Chunk writes sent before the first of them is answered (default 4): one at a time, each chunk
   * waited a round trip. Writes in flight count towards maxBacklogEntries, so the bound holds.
   */
  maxWritesInFlight?: number;
  signal: AbortSignal;
}

const START_ANNOUNCE_DELAY_MS = 25;

/**
 * A job the api withdrew (its client left: cancel key set, stream deleted at once) may end before
 * the worker's cancel poll sees the key; its last entries then recreate the stream for nobody, kept
 * for their TTL. The terminal write runs this in the same transaction, after its entries: the api
 * sets the cancel key before it deletes the stream, so an entry written before that deletion is
 * deleted by it, and one written after it sees the key here. No round trip of its own per job.
 */
const DROP_IF_WITHDRAWN =
  "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3]) end return 0";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type ExecReplies = Array<[error: Error | null, result: unknown]> | null;

/**
 * ioredis resolves a pipeline or MULTI with one [err, result] per command and does not reject
 * when one of them failed: an XADD refused (OOM under noeviction) next to a successful XLEN
 * would otherwise lose a chunk silently. Returns the results when every command succeeded.
 */
function checkReplies(replies: ExecReplies): unknown[] {
  if (!replies) throw new FusionError('PROXY_STREAM_ABORTED', 'Redis discarded the result-stream transaction');
  for (const [err] of replies) if (err) throw err;
  return replies.map(([, result]) => result);
}

/**
 * Worker side of a job's result stream: batches lines into chunks (many lines per XADD),
 * keeps a few XADDs in flight (one connection keeps them in order) while the next chunk fills,
 * and waits while the reader's unread backlog is at the bound, so memory in Redis stays bounded
 * whatever the result size.
 */
export class ResultStreamWriter implements OutputSink {
  private readonly batcher: LineBatcher;
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;
  private roomWaiters: Array<() => void> = [];
  private broken: Error | undefined;
  private lastSignal = 0;
  private lastExpire = 0;
  private startTimer: NodeJS.Timeout | undefined;
  /** Sequence number of the next data entry; with itemsWritten, the totals the end entry carries. */
  private nextSeq = 0;
  private itemsWritten = 0;
  /** Largest XLEN seen after a write (tests and benchmark). */
  maxBacklogSeen = 0;
  /** XLEN answers of the chunk writes in flight, oldest first. */
  private readonly inFlight: Array<Promise<number>> = [];
  /** Unread entries as last answered (the reader only lowers it; writes in flight are counted apart). */
  private knownBacklog = 0;
  /** The end or error entry is on its way: the reader may be done with this job from now on. */
  private terminalSent = false;
  /** Redis confirmed the end or error entry, and with it the withdrawn check (DROP_IF_WITHDRAWN). */
  private terminalConfirmed = false;
  /**
   * end() or fail() was called. A command's leftover work (a page read still in flight when it was
   * cancelled) may still report progress; that heartbeat must not recreate, with the 10-minute TTL,
   * a stream the api or the worker has already deleted.
   */
  private closing = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ResultKeys,
    private readonly opts: ResultStreamWriterOptions,
  ) {
    this.batcher = new LineBatcher({ maxBytes: opts.chunkBytes, lingerMs: opts.lingerMs }, (data, items) =>
      this.enqueue(() => this.writeChunk(data, items)),
    );
  }

  /**
   * Announces the start (the api's first sign of life) a little later, unless output or the end
   * comes first (which says the same): a quick command then costs the api one wake-up, not two.
   */
  start(): void {
    this.lastSignal = Date.now();
    this.startTimer = setTimeout(
      () => {
        this.startTimer = undefined;
        this.enqueue(async () => {
          checkReplies(
            await this.redis
              .multi()
              .xadd(this.keys.stream, '*', 't', ENTRY.started)
              .pexpire(this.keys.stream, this.opts.ttlMs)
              .exec(),
          );
        });
      },
      Math.min(START_ANNOUNCE_DELAY_MS, this.opts.progressIntervalMs),
    );
  }

  private cancelStartAnnouncement(): void {
    if (this.startTimer) clearTimeout(this.startTimer);
    this.startTimer = undefined;
  }

  write(line: string): Promise<void> | undefined {
    if (this.broken) throw this.broken;
    this.batcher.add(line);
    // One chunk in flight and one waiting is enough to keep Redis busy; beyond that, wait.
    if (this.queued < 2) return undefined;
    return new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  progress(): void {
    if (this.closing) return;
    const now = Date.now();
    if (now - this.lastSignal < this.opts.progressIntervalMs || this.queued > 0) return;
    this.lastSignal = now;
    // Also keeps the stream alive while the command works for long without output.
    this.enqueue(async () => {
      checkReplies(
        await this.redis
          .pipeline()
          .xadd(this.keys.stream, '*', 't', ENTRY.progress)
          .pexpire(this.keys.stream, this.opts.ttlMs)
          .exec(),
      );
    });
  }

  /** True once the end or error entry was sent: the api may then drop its reader lease at any moment. */
  get finished(): boolean {
    return this.terminalSent;
  }

  /** True once the end or error entry and the withdrawn check are in Redis: nothing is left to drop. */
  get closedInRedis(): boolean {
    return this.terminalConfirmed;
  }

  /**
   * After the job: drops the stream, the cancel key and the lease if the api withdrew the job. The
   * terminal write did that already in its own transaction; only a job whose terminal write did not
   * reach Redis needs this round trip.
   */
  async dropIfWithdrawn(): Promise<void> {
    if (this.terminalConfirmed) return;
    const { stream, cancel, reader } = this.keys;
    await this.redis.eval(DROP_IF_WITHDRAWN, 3, cancel, stream, reader);
  }

  /** The terminal transaction's last steps: the TTL of an ended stream, then the withdrawn check. */
  private async closeTransaction(tx: ChainableCommander): Promise<void> {
    const { stream, cancel, reader } = this.keys;
    checkReplies(
      await tx.pexpire(stream, this.opts.endTtlMs).eval(DROP_IF_WITHDRAWN, 3, cancel, stream, reader).exec(),
    );
    this.terminalConfirmed = true;
  }

  async end(): Promise<void> {
    this.closing = true;
    // The last partial chunk and the end entry travel in one round trip.
    this.cancelStartAnnouncement();
    const rest = this.batcher.take();
    if (this.queued > 0) await this.tail;
    // Every chunk must be confirmed before the end entry claims the totals.
    if (!this.broken) await this.settleAll().catch((e: unknown) => this.breakWith(e));
    if (this.broken) throw this.broken;
    const tx = this.redis.multi();
    this.terminalSent = true;
    if (rest) tx.xadd(this.keys.stream, '*', ...this.dataFields(rest.data, rest.items));
    // The totals let the reader tell a complete stream from one that lost entries (expiry, failover).
    tx.xadd(this.keys.stream, '*', 't', ENTRY.end, 'q', String(this.nextSeq), 'n', String(this.itemsWritten));
    await this.closeTransaction(tx);
  }

  async fail(error: FusionError): Promise<void> {
    this.closing = true;
    this.cancelStartAnnouncement();
    // Output produced before the failure still goes out, as in embedded mode; the error entry follows it.
    if (this.broken || error.code === 'COMMAND_CANCELLED') this.batcher.dispose();
    else this.batcher.flush();
    await this.tail.catch(() => undefined);
    await this.settleAll().catch((e: unknown) => this.breakWith(e));
    this.terminalSent = true;
    await this.closeTransaction(
      this.redis.multi().xadd(this.keys.stream, '*', 't', ENTRY.error, 'c', error.code, 'm', error.message),
    );
  }

  private enqueue(task: () => Promise<void>): void {
    this.queued += 1;
    this.tail = this.tail
      .then(() => (this.broken ? undefined : task()))
      .catch((e: unknown) => this.breakWith(e))
      .finally(() => {
        this.queued -= 1;
        if (this.queued < 2 && this.roomWaiters.length > 0) {
          const waiters = this.roomWaiters;
          this.roomWaiters = [];
          for (const w of waiters) w();
        }
      });
  }

  private breakWith(e: unknown): void {
    this.broken ??= e instanceof Error ? e : new Error(String(e));
  }

  private async writeChunk(data: string, items: number): Promise<void> {
    this.cancelStartAnnouncement();
    // Room first: the unread entries plus the writes not yet answered stay within the bound.
    const maxInFlight = Math.max(1, this.opts.maxWritesInFlight ?? 4);
    while (
      this.inFlight.length > 0 &&
      (this.inFlight.length >= maxInFlight || this.knownBacklog + this.inFlight.length >= this.opts.maxBacklogEntries)
    ) {
      await this.settleOldest();
    }
    // A plain pipeline (no MULTI): nothing here needs atomicity, and one connection keeps the order.
    const p = this.redis.pipeline().xadd(this.keys.stream, '*', ...this.dataFields(data, items));
    const now = Date.now();
    if (now - this.lastExpire >= 1000) {
      this.lastExpire = now;
      p.pexpire(this.keys.stream, this.opts.ttlMs);
    }
    const len = p
      .xlen(this.keys.stream)
      .exec()
      .then((replies) => {
        const results = checkReplies(replies);
        return Number(results[results.length - 1] ?? 0);
      });
    // Awaited by settleOldest; a failure is raised there, never left unhandled meanwhile.
    len.catch(() => undefined);
    this.inFlight.push(len);
    this.lastSignal = now;
  }

  /** Waits for the oldest write in flight; when the backlog it reports is over the bound, for the reader too. */
  private async settleOldest(): Promise<void> {
    const len = await this.inFlight.shift()!;
    if (len > this.maxBacklogSeen) this.maxBacklogSeen = len;
    this.knownBacklog = len;
    if (len > this.opts.maxBacklogEntries) this.knownBacklog = await this.waitForRoom(len);
  }

  private async settleAll(): Promise<void> {
    while (this.inFlight.length > 0) await this.settleOldest();
  }

  /** Fields of a data entry; numbers it (q) and counts its items towards the end totals. */
  private dataFields(data: string, items: number): string[] {
    const seq = this.nextSeq;
    this.nextSeq += 1;
    this.itemsWritten += items;
    return ['t', ENTRY.data, 'q', String(seq), 'n', String(items), 'd', data];
  }

  /** Returns the backlog once it is at half the bound or below. */
  private async waitForRoom(initial: number): Promise<number> {
    let len = initial;
    let lastChange = Date.now();
    let delay = 1;
    while (len > this.opts.maxBacklogEntries / 2) {
      if (this.opts.signal.aborted) throw new FusionError('COMMAND_CANCELLED', 'the command was cancelled');
      if (Date.now() - lastChange > this.opts.readerIdleTimeoutMs) {
        throw new FusionError('COMMAND_TIMEOUT', `the api read nothing for ${this.opts.readerIdleTimeoutMs} ms`);
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 20);
      // A slow reader may keep the writer here longer than ttlMs: the stream must not expire meanwhile.
      const [, next] = checkReplies(
        await this.redis.pipeline().pexpire(this.keys.stream, this.opts.ttlMs).xlen(this.keys.stream).exec(),
      ) as [unknown, number];
      if (next < len) {
        lastChange = Date.now();
        delay = 1;
      }
      len = next;
    }
    return len;
  }
}
