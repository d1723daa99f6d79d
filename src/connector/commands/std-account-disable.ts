import type { StdAccountDisableHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/**
 * The SDK's typed handler for `std:account:disable`; the core or the proxy server does the work (../command-run.ts).
 */
export const stdAccountDisable =
  (run: CommandRun): StdAccountDisableHandler =>
  (context, input, res) =>
    run('std:account:disable', context, input, res);
