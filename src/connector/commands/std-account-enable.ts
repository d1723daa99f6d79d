import type { StdAccountEnableHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/** The SDK's typed handler for `std:account:enable`; the core or the proxy server does the work (../command-run.ts). */
export const stdAccountEnable =
  (run: CommandRun): StdAccountEnableHandler =>
  (context, input, res) =>
    run('std:account:enable', context, input, res);
