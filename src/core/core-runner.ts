import type { CommandContext, CommandOutput, CommandRunner } from './command-runner';
import type { CommandType } from './command-types';
import { FusionError } from './errors';
import { failedStream } from './failed-stream';

/** A core command: a function of (input, config, context) that yields output items. */
export type CoreCommand = (
  input: Record<string, unknown>,
  config: Record<string, unknown>,
  ctx: CommandContext,
) => AsyncIterable<CommandOutput>;

export type CoreCommandTable = Partial<Record<CommandType, CoreCommand>>;

/** Builds the CommandRunner the transports use from a table of core commands. */
export function createCoreRunner(commands: CoreCommandTable): CommandRunner {
  return (type, input, config, ctx) => {
    const command = commands[type];
    if (!command) {
      return failedStream<CommandOutput>(
        new FusionError('COMMAND_NOT_IMPLEMENTED', `${type} is not available in this build of fusion-proxy`, { type }),
      );
    }
    return command(input, config, ctx);
  };
}
