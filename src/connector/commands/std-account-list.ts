import type { StdAccountListHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/** The SDK's typed handler for `std:account:list`; the core or the proxy server does the work (../command-run.ts). */
export const stdAccountList =
  (run: CommandRun): StdAccountListHandler =>
  (context, input, res) =>
    run('std:account:list', context, input, res);
