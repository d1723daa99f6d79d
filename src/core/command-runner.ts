import type { CommandType } from './command-types';
import type { Logger } from './ports/logger';

/** One output item of a command: a plain JSON object, written as one NDJSON line. */
export type CommandOutput = Record<string, unknown>;

export interface CommandContext {
  /** Aborted when the client disconnects, the job is cancelled or the server shuts down. */
  signal: AbortSignal;
  logger: Logger;
  /** Id of the request or job, for logs and lock tokens. */
  jobId: string;
  /** Called by long computations that emit nothing for a while, so the transport knows the command is alive. */
  progress: () => void;
  /**
   * Fields the transport stamps on every record this command logs (job id, command); `logger`
   * already carries them, and records copied to the external log sink get them too.
   */
  logFields?: Readonly<Record<string, string>>;
}

/**
 * The seam between transport (embedded api, BullMQ worker, SDK connector) and the connector core.
 * `config` has already been checked by the transport: proxyPassword removed, proxyEnabled false,
 * secrets decrypted.
 */
export type CommandRunner = (
  type: CommandType,
  input: Record<string, unknown>,
  config: Record<string, unknown>,
  ctx: CommandContext,
) => AsyncIterable<CommandOutput>;
