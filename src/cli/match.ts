import { FusionError } from '../core/errors';

/** Placeholder until issue 5 lands. */
export async function run(_argv: string[]): Promise<number> {
  throw new FusionError('COMMAND_NOT_IMPLEMENTED', 'fusion-proxy match arrives with issue 5');
}
