import type { StdAccountCreateHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/** The SDK's typed handler for `std:account:create`; the core or the proxy server does the work (../command-run.ts). */
export const stdAccountCreate =
  (run: CommandRun): StdAccountCreateHandler =>
  (context, input, res) =>
    run('std:account:create', context, input, res);
