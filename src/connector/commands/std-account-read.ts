import type { StdAccountReadHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/** The SDK's typed handler for `std:account:read`; the core or the proxy server does the work (../command-run.ts). */
export const stdAccountRead =
  (run: CommandRun): StdAccountReadHandler =>
  (context, input, res) =>
    run('std:account:read', context, input, res);
