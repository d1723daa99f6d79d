import type { CommandType } from '../core/command-types';

/** A command accepted by the api: password removed, proxyEnabled forced to false. */
export interface ProxyCommand {
  type: CommandType;
  input: Record<string, unknown>;
  config: Record<string, unknown>;
  /** The request id; also the job id in queue mode and `ctx.jobId` in the runner. */
  requestId: string;
}

/** NDJSON (whole lines, each ending in "\n") as text or UTF-8 bytes, and how many items it holds. */
export interface OutputChunk {
  data: string | Buffer;
  items: number;
}

export type DispatchMode = 'embedded' | 'queue';

export interface Readiness {
  ok: boolean;
  reason?: string;
}

/**
 * How the api gets a command run, whatever the mode. The iterable yields output as it is
 * produced, ends when the command completes, and throws a FusionError when it fails.
 * Aborting `signal` cancels the command (the runner's ctx.signal fires, in this process or a worker).
 */
export interface CommandDispatcher {
  readonly mode: DispatchMode;
  dispatch(cmd: ProxyCommand, signal: AbortSignal): AsyncIterable<OutputChunk>;
  ready(): Promise<Readiness>;
  close(): Promise<void>;
}
