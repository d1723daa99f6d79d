import type { StdTestConnectionHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/**
 * The SDK's typed handler for `std:test-connection`; the core or the proxy server does the work (../command-run.ts).
 */
export const stdTestConnection =
  (run: CommandRun): StdTestConnectionHandler =>
  (context, input, res) =>
    run('std:test-connection', context, input, res);
