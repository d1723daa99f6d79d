import type { FusionError } from '../core/errors';

/**
 * Where a running command's output goes (an in-memory channel or a Redis stream).
 * `write` returns a promise only when the producer must wait (backpressure); the common
 * case costs no await per item.
 */
export interface OutputSink {
  write(line: string): Promise<void> | undefined;
  /** The command is alive but has nothing to emit yet (ctx.progress()). */
  progress(): void;
  end(): Promise<void>;
  fail(error: FusionError): Promise<void>;
}
