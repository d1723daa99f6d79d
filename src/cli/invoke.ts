import { FusionError } from '../core/errors';

/** Placeholder until issue 2 lands. */
export async function run(_argv: string[]): Promise<number> {
  throw new FusionError('COMMAND_NOT_IMPLEMENTED', 'fusion-proxy invoke arrives with issue 2');
}
