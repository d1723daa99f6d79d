import type { StdEntitlementListHandler } from '@sailpoint/connector-sdk';
import type { CommandRun } from '../command-run';

/**
 * The SDK's typed handler for `std:entitlement:list`; the core or the proxy server does the work (../command-run.ts).
 */
export const stdEntitlementList =
  (run: CommandRun): StdEntitlementListHandler =>
  (context, input, res) =>
    run('std:entitlement:list', context, input, res);
