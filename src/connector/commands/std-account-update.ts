import type { StdAccountUpdateHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/** The SDK's typed handler for `std:account:update`; the core or the proxy server does the work (../command-run.ts). */
export const stdAccountUpdate =
  (run: CommandRun): StdAccountUpdateHandler =>
  (context, input, res) =>
    run('std:account:update', context, input, res);
