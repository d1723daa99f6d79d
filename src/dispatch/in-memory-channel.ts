import { FusionError } from '../core/errors';
import type { OutputChunk } from './command-dispatcher';
import { LineBatcher } from './line-batcher';
import type { OutputSink } from './output-sink';

export interface InMemoryChannelOptions {
  /** Target size of one chunk handed to the reader. */
  chunkBytes: number;
  /** Unread bytes above which the producer waits (it resumes below half of it). */
  maxBacklogBytes: number;
}

type Wake = () => void;

/**
 * The embedded-mode equivalent of a job's Redis stream: a bounded queue of NDJSON chunks
 * between the command (producer) and the HTTP response (reader), with the same
 * backpressure, progress and terminal end/error semantics.
 */
export class InMemoryChannel implements OutputSink {
  private readonly chunks: OutputChunk[] = [];
  private backlogBytes = 0;
  private readonly batcher: LineBatcher;
  private finished = false;
  private failure: FusionError | undefined;
  private closed = false;
  private readerWake: Wake | undefined;
  private writerWake: { resolve: Wake; reject: (e: Error) => void } | undefined;
  /** Largest unread backlog seen, for tests and the benchmark. */
  maxBacklogSeen = 0;

  constructor(private readonly opts: InMemoryChannelOptions) {
    this.batcher = new LineBatcher({ maxBytes: opts.chunkBytes, lingerMs: 0 }, (data, items) =>
      this.push({ data, items }),
    );
  }

  // ---- producer side (OutputSink)

  write(line: string): Promise<void> | undefined {
    if (this.closed) throw new FusionError('COMMAND_CANCELLED', 'the reader went away');
    const emitted = this.batcher.add(line);
    if (this.backlogBytes <= this.opts.maxBacklogBytes) {
      // A producer that never awaits real I/O would otherwise keep the event loop (sockets,
      // heartbeats, other requests) waiting until the backlog is full: yield once per chunk.
      return emitted ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined;
    }
    return new Promise<void>((resolve, reject) => {
      this.writerWake = { resolve, reject };
    });
  }

  progress(): void {
    this.wakeReader();
  }

  async end(): Promise<void> {
    this.batcher.flush();
    this.finished = true;
    this.wakeReader();
  }

  async fail(error: FusionError): Promise<void> {
    this.batcher.flush();
    // Counted where the command ran (component "embedded"): the api does not count it again.
    this.failure = new FusionError(
      error.code,
      error.message,
      { ...error.details, fromCommand: true },
      { cause: error },
    );
    this.finished = true;
    this.wakeReader();
  }

  // ---- reader side

  /**
   * Yields chunks until the producer ends (or throws its error). Throws COMMAND_TIMEOUT when
   * neither output nor progress arrives for `idleTimeoutMs`, COMMAND_CANCELLED on abort.
   */
  async *read(signal: AbortSignal, idleTimeoutMs: number): AsyncGenerator<OutputChunk> {
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk) {
          this.backlogBytes -= chunk.data.length;
          if (this.writerWake && this.backlogBytes <= this.opts.maxBacklogBytes / 2) {
            const w = this.writerWake;
            this.writerWake = undefined;
            w.resolve();
          }
          yield chunk;
          continue;
        }
        if (this.finished) {
          if (this.failure) throw this.failure;
          return;
        }
        await this.waitForActivity(signal, idleTimeoutMs);
      }
    } finally {
      this.close();
    }
  }

  /** Marks the reader gone: a waiting or later write fails, so the producer stops. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.batcher.dispose();
    this.chunks.length = 0;
    this.backlogBytes = 0;
    const w = this.writerWake;
    this.writerWake = undefined;
    w?.reject(new FusionError('COMMAND_CANCELLED', 'the reader went away'));
  }

  private push(chunk: OutputChunk): void {
    if (this.closed) return;
    this.chunks.push(chunk);
    this.backlogBytes += chunk.data.length;
    if (this.backlogBytes > this.maxBacklogSeen) this.maxBacklogSeen = this.backlogBytes;
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.readerWake;
    this.readerWake = undefined;
    wake?.();
  }

  private waitForActivity(signal: AbortSignal, idleTimeoutMs: number): Promise<void> {
    if (signal.aborted) return Promise.reject(new FusionError('COMMAND_CANCELLED', 'the request was cancelled'));
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        done();
        this.readerWake = undefined;
        reject(new FusionError('COMMAND_CANCELLED', 'the request was cancelled'));
      };
      const timer = setTimeout(() => {
        this.readerWake = undefined;
        signal.removeEventListener('abort', onAbort);
        reject(
          new FusionError(
            'COMMAND_TIMEOUT',
            `the command showed no progress for ${idleTimeoutMs} ms (REQUEST_TIMEOUT_MS)`,
            {
              timeoutMs: idleTimeoutMs,
            },
          ),
        );
      }, idleTimeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.readerWake = () => {
        done();
        resolve();
      };
    });
  }
}
