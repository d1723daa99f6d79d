import { createConnector, readConfig, type Connector } from '@sailpoint/connector-sdk';
import type { CommandRunner } from '../core/command-runner';
import type { Logger } from '../core/ports/logger';
import { boundLogger } from '../observability/bound-logger';
import { createLogger, LOG_LEVELS, type LogLevel } from '../observability/logger';
import type { ProxyTimeouts } from '../proxy-client/proxy-client';
import type { RoleEnv } from '../proxy-client/role';
import { createProductionRunner } from '../runtime/production-runner';
import { createCommandRun } from './command-run';
import { stdAccountCreate } from './commands/std-account-create';
import { stdAccountDisable } from './commands/std-account-disable';
import { stdAccountDiscoverSchema } from './commands/std-account-discover-schema';
import { stdAccountEnable } from './commands/std-account-enable';
import { stdAccountList } from './commands/std-account-list';
import { stdAccountRead } from './commands/std-account-read';
import { stdAccountUpdate } from './commands/std-account-update';
import { stdEntitlementList } from './commands/std-entitlement-list';
import { stdTestConnection } from './commands/std-test-connection';

/**
 * The platform-side face of fusion-proxy: a SaaS connector built with @sailpoint/connector-sdk.
 * Every command detects its role from the configuration (src/proxy-client/role.ts): in
 * proxy-client role it forwards to the Proxy URL and streams the answer back item by item;
 * otherwise it runs the connector core in this process.
 */
export interface FusionConnectorOptions {
  /** Default: the production runner, created on first direct use. */
  runner?: () => CommandRunner;
  /** Default: process.env (PROXY_PASSWORD is read on every command). */
  env?: RoleEnv;
  logger?: Logger;
  proxyTimeouts?: ProxyTimeouts;
  /**
   * Interval of the keepAlive sent to the platform while a command runs (default 30 s; the platform's limit is 2.5
   * min).
   */
  keepAliveIntervalMs?: number;
  /** Default: the SDK's readConfig(). */
  readConfig?: () => Promise<Record<string, unknown>>;
}

export const DEFAULT_KEEP_ALIVE_INTERVAL_MS = 30_000;

/** Created on the first log line, so LOG_LEVEL is read when the platform runs a command, not at import. */
function defaultLogger(): Logger {
  let real: Logger | undefined;
  return boundLogger(() => {
    const level = process.env.LOG_LEVEL?.toLowerCase();
    real ??= createLogger({
      name: 'fusion-connector',
      level: LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : 'info',
    });
    return real;
  });
}

export function createFusionConnector(opts: FusionConnectorOptions = {}): Connector {
  let runner: CommandRunner | undefined;
  const logger = opts.logger ?? defaultLogger();
  const run = createCommandRun({
    readConfig: opts.readConfig ?? (async () => (await readConfig()) as Record<string, unknown>),
    runner: opts.runner ?? (() => (runner ??= createProductionRunner())),
    env: opts.env ?? process.env,
    // Whatever logger is given, calls go through the bound facade: no detached method, no throwing log call.
    logger: boundLogger(() => logger),
    proxyTimeouts: opts.proxyTimeouts,
    keepAliveIntervalMs: opts.keepAliveIntervalMs ?? DEFAULT_KEEP_ALIVE_INTERVAL_MS,
  });
  return createConnector()
    .stdTestConnection(stdTestConnection(run))
    .stdAccountList(stdAccountList(run))
    .stdAccountRead(stdAccountRead(run))
    .stdAccountEnable(stdAccountEnable(run))
    .stdAccountDisable(stdAccountDisable(run))
    .stdAccountCreate(stdAccountCreate(run))
    .stdAccountUpdate(stdAccountUpdate(run))
    .stdAccountDiscoverSchema(stdAccountDiscoverSchema(run))
    .stdEntitlementList(stdEntitlementList(run));
}

export const connector: Connector = createFusionConnector();
