import { isCommandType } from '../core/command-types';
import { FusionError } from '../core/errors';
import type { ProxyCommand } from '../dispatch/command-dispatcher';
import type { JobCrypto } from './job-crypto';

/** What BullMQ stores for a command: the type in clear (for operators), everything else sealed. */
export interface CommandJobData {
  v: 1;
  type: string;
  sealed: string;
  /** The api holds a reader lease on this job (absent on jobs queued by an api that predates leases). */
  lease?: true;
}

export function sealCommand(cmd: ProxyCommand, crypto: JobCrypto): CommandJobData {
  // Input and config are sealed whole: besides clientSecret, create/update inputs may carry passwords.
  return {
    v: 1,
    type: cmd.type,
    sealed: crypto.encrypt(JSON.stringify({ input: cmd.input, config: cmd.config })),
    lease: true,
  };
}

export function openCommand(data: CommandJobData, jobId: string, crypto: JobCrypto): ProxyCommand {
  if (data.v !== 1 || !isCommandType(data.type)) {
    throw new FusionError('COMMAND_UNKNOWN', `job ${jobId} has an unknown format or command type`);
  }
  const payload = JSON.parse(crypto.decrypt(data.sealed)) as {
    input: Record<string, unknown>;
    config: Record<string, unknown>;
  };
  return { type: data.type, input: payload.input, config: payload.config, requestId: jobId };
}
