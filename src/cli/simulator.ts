import { FusionError } from '../core/errors';

/** Placeholder until issue 3 lands. */
export async function run(_argv: string[]): Promise<number> {
  throw new FusionError('COMMAND_NOT_IMPLEMENTED', 'fusion-proxy simulator arrives with issue 3');
}
