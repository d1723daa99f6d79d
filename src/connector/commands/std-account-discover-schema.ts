import type { StdAccountDiscoverSchemaHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/**
 * The SDK's typed handler for `std:account:discover-schema`; the core or the proxy server does the work (../command-
 * run.ts).
 */
export const stdAccountDiscoverSchema =
  (run: CommandRun): StdAccountDiscoverSchemaHandler =>
  (context, input, res) =>
    run('std:account:discover-schema', context, input, res);
