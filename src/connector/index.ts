import { createConnector, readConfig, type Connector } from '@sailpoint/connector-sdk';
import type { CommandRunner } from '../core/command-runner';
import { COMMAND_TYPES } from '../core/command-types';
import type { LogFn, Logger } from '../core/ports/logger';
import { createLogger, LOG_LEVELS, type LogLevel } from '../observability/logger';
import type { ProxyTimeouts } from '../proxy-client/proxy-client';
import type { RoleEnv } from '../proxy-client/role';
import { createProductionRunner } from '../runtime/production-runner';
import { createCommandHandler } from './command-handler';

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
  /** Minimum interval between two keepAlive responses to the platform (default 30 s). */
  keepAliveIntervalMs?: number;
  /** Default: the SDK's readConfig(). */
  readConfig?: () => Promise<Record<string, unknown>>;
}

/** Created on the first log line, so LOG_LEVEL is read when the platform runs a command, not at import. */
function defaultLogger(): Logger {
  let real: Logger | undefined;
  const get = (): Logger => {
    const level = process.env.LOG_LEVEL;
    real ??= createLogger({ name: 'fusion-connector', level: LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : 'info' });
    return real;
  };
  const fwd =
    (level: keyof Logger): LogFn =>
    (a: Record<string, unknown> | string, msg?: string) => {
      const log = get()[level];
      if (typeof a === 'string') log(a);
      else log(a, msg);
    };
  return { error: fwd('error'), warn: fwd('warn'), info: fwd('info'), debug: fwd('debug') };
}

export function createFusionConnector(opts: FusionConnectorOptions = {}): Connector {
  let runner: CommandRunner | undefined;
  const deps = {
    readConfig: opts.readConfig ?? (async () => (await readConfig()) as Record<string, unknown>),
    runner: opts.runner ?? (() => (runner ??= createProductionRunner())),
    env: opts.env ?? process.env,
    logger: opts.logger ?? defaultLogger(),
    proxyTimeouts: opts.proxyTimeouts,
    keepAliveIntervalMs: opts.keepAliveIntervalMs ?? 30_000,
  };
  const connector = createConnector();
  for (const type of COMMAND_TYPES) connector.command(type, createCommandHandler(type, deps));
  return connector;
}

export const connector: Connector = createFusionConnector();
