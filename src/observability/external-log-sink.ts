/**
 * "Enable external logging?": records go to the "External logging URL" in batches (HTTP POST of a
 * JSON array). The buffer is bounded; when it is full, or the URL is down, records are dropped and
 * counted. Nothing here ever blocks or fails the command that logs.
 */
import type { LogRecord, LogSink } from './log-sink-port';
import { currentLogContext } from './log-context';

export interface ExternalLogSinkOptions {
  /** Records kept while a send is in flight or the URL is down. Default 1000. */
  maxBuffered?: number;
  /** Records per POST. Default 100. */
  batchSize?: number;
  /** Send at least this often while records wait. Default 1000 ms. */
  flushEveryMs?: number;
  /** Per-POST timeout. Default 5000 ms. */
  timeoutMs?: number;
  /** Longest close() waits for the last batch. Default 2000 ms. */
  closeTimeoutMs?: number;
  fetchImpl?: typeof fetch;
}

export interface ExternalLogStats {
  sent: number;
  dropped: number;
  failedPosts: number;
}

export class ExternalLogSink implements LogSink {
  private buffer: LogRecord[] = [];
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private abandonInFlight: AbortController | undefined;
  /** Set at close()'s deadline: nothing more is posted. */
  private gaveUp = false;
  readonly stats: ExternalLogStats = { sent: 0, dropped: 0, failedPosts: 0 };
  private readonly o: Required<Omit<ExternalLogSinkOptions, 'fetchImpl'>> & { fetchImpl: typeof fetch };

  constructor(
    private readonly url: string,
    opts: ExternalLogSinkOptions = {},
  ) {
    this.o = {
      maxBuffered: opts.maxBuffered ?? 1000,
      batchSize: opts.batchSize ?? 100,
      flushEveryMs: opts.flushEveryMs ?? 1000,
      timeoutMs: opts.timeoutMs ?? 5000,
      closeTimeoutMs: opts.closeTimeoutMs ?? 2000,
      fetchImpl: opts.fetchImpl ?? fetch,
    };
  }

  write(record: LogRecord): void {
    if (this.closed) return;
    if (this.buffer.length >= this.o.maxBuffered) {
      this.stats.dropped++;
      return;
    }
    // Job id and command, as on every process log line, so records can be tied to their run.
    this.buffer.push({ ...currentLogContext(), ...record });
    if (this.buffer.length >= this.o.batchSize) this.kick();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.kick();
      }, this.o.flushEveryMs);
      this.timer.unref();
    }
  }

  private kick(): void {
    if (this.gaveUp || this.inFlight || this.buffer.length === 0) return;
    const batch = this.buffer.splice(0, this.o.batchSize);
    this.inFlight = this.post(batch).finally(() => {
      this.inFlight = undefined;
      if (this.buffer.length >= this.o.batchSize || (this.closed && this.buffer.length > 0)) this.kick();
    });
  }

  private async post(batch: LogRecord[]): Promise<void> {
    const abandon = new AbortController();
    this.abandonInFlight = abandon;
    try {
      const res = await this.o.fetchImpl(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(batch),
        signal: AbortSignal.any([abandon.signal, AbortSignal.timeout(this.o.timeoutMs)]),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) throw new Error(`status ${res.status}`);
      this.stats.sent += batch.length;
    } catch {
      this.stats.failedPosts++;
      this.stats.dropped += batch.length;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + this.o.closeTimeoutMs;
    this.kick();
    while ((this.inFlight || this.buffer.length > 0) && Date.now() < deadline) {
      const wait = new Promise<void>((r) => setTimeout(r, Math.max(1, deadline - Date.now())).unref());
      await Promise.race([this.inFlight ?? Promise.resolve(), wait]);
      this.kick();
    }
    // A post still running at the deadline is abandoned, so its batch is counted as dropped now
    // rather than after close() has reported the figures.
    this.gaveUp = true;
    if (this.inFlight) {
      this.abandonInFlight?.abort();
      await this.inFlight;
    }
    this.stats.dropped += this.buffer.length;
    this.buffer = [];
  }
}
