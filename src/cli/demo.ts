import { FusionError } from '../core/errors';

/** Placeholder until issue 4 lands. */
export async function run(_argv: string[]): Promise<number> {
  throw new FusionError('COMMAND_NOT_IMPLEMENTED', 'fusion-proxy demo arrives with issue 4');
}
