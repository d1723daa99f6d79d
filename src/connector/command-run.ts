import { randomUUID } from 'node:crypto';
import type { Context, Response } from '@sailpoint/connector-sdk';
import type { CommandRunner } from '../core/command-runner';
import type { CommandType } from '../core/command-types';
import { FusionError, isFusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { runWithLogContext } from '../observability/log-context';
import { redactText, secretsOf } from '../secrets/redaction';
import { invokeProxy, type ProxyTimeouts } from '../proxy-client/proxy-client';
import { detectRole, proxyEnabledWithoutUrl, type ConnectorRole, type RoleEnv } from '../proxy-client/role';
import { toConnectorError } from './connector-errors';
import { passwordMatches } from '../secrets/password-compare';
import { configForCore } from '../core/config/proxy-password';
import { fromPlatformForm } from './platform-form';
import { createResponseSink, type ResponseSink } from './response-sink';

export interface HandlerDeps {
  /** The connector configuration of this command (the SDK's readConfig in production). */
  readConfig: () => Promise<Record<string, unknown>>;
  /** Created on first use: the direct and proxy-server roles need it, the proxy-client role never does. */
  runner: () => CommandRunner;
  /** Read on every command, so PROXY_PASSWORD is looked up at call time. */
  env: RoleEnv;
  logger: Logger;
  proxyTimeouts?: ProxyTimeouts;
  /** Interval of the keepAlive the platform receives while a command runs (well under its 2.5-minute limit). */
  keepAliveIntervalMs: number;
}

/**
 * Runs one command for the SDK: detect the role, then forward to the proxy or run the core here,
 * sending every item as `O` (the command's SDK output type). The item shape is the core's
 * (or the proxy server's) and matches the SDK's output of the command; this is the one place
 * where the untyped core output becomes the platform's typed output.
 */
export type CommandRun = <O>(
  type: CommandType,
  context: Context,
  input: object | undefined,
  res: Response<O>,
) => Promise<void>;

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

async function runDirect(
  type: CommandType,
  input: Record<string, unknown>,
  config: Record<string, unknown>,
  context: Context,
  sink: ResponseSink,
  deps: HandlerDeps,
): Promise<number> {
  const ac = new AbortController();
  const jobId = context.invocationId ?? context.requestId ?? randomUUID();
  let items = 0;
  for await (const item of deps.runner()(type, input, configForCore(config), {
    signal: ac.signal,
    logger: deps.logger,
    jobId,
    progress: () => sink.keepAlive(),
  })) {
    items += 1;
    await sink.send(item);
  }
  return items;
}

async function runAsProxyClient(
  type: CommandType,
  input: Record<string, unknown>,
  config: Record<string, unknown>,
  sink: ResponseSink,
  deps: HandlerDeps,
): Promise<number> {
  const password = typeof config.proxyPassword === 'string' ? config.proxyPassword : '';
  const result = await invokeProxy(
    {
      url: String(config.proxyUrl),
      password,
      type,
      input,
      config,
      timeouts: deps.proxyTimeouts,
      logger: deps.logger,
      onHeartbeat: () => sink.keepAlive(),
    },
    (item) => sink.send(item),
  );
  return result.items;
}

async function runInRole(
  role: ConnectorRole,
  type: CommandType,
  input: Record<string, unknown>,
  config: Record<string, unknown>,
  context: Context,
  sink: ResponseSink,
  deps: HandlerDeps,
): Promise<number> {
  switch (role) {
    case 'proxy-client':
      return runAsProxyClient(type, input, config, sink, deps);
    case 'proxy-server':
      // This process is the proxy server: the caller must know the shared secret (spec:
      // "When they differ, the server answers 401 and does not run the command").
      if (!passwordMatches(config.proxyPassword, String(deps.env.PROXY_PASSWORD))) {
        throw new FusionError(
          'PROXY_UNAUTHORIZED',
          'The proxy password in the configuration does not match PROXY_PASSWORD of this proxy server; the command was not run. Make the two equal (exact, case-sensitive).',
        );
      }
      return runDirect(type, input, config, context, sink, deps);
    case 'direct':
      if (proxyEnabledWithoutUrl(config, deps.env)) {
        deps.logger.warn({}, 'proxy mode is enabled but no Proxy URL is set: processing directly in this connector');
      }
      return runDirect(type, input, config, context, sink, deps);
  }
}

export function createCommandRun(deps: HandlerDeps): CommandRun {
  return async (type, context, rawInput, res) => {
    const requestId = context.invocationId ?? context.requestId;
    await runWithLogContext({ command: type, ...(requestId ? { requestId } : {}) }, async () => {
      // Keeps the command alive by itself too (see createResponseSink), until `close()`.
      const sink = createResponseSink(res, deps.keepAliveIntervalMs);
      let role: ConnectorRole | undefined;
      let secrets: string[] = [];
      try {
        // The form's shape becomes the core's here, so a proxy server receives the same shape as direct processing.
        const config = fromPlatformForm(asRecord(await deps.readConfig()));
        secrets = secretsOf(config);
        role = detectRole(config, deps.env);
        deps.logger.debug({ role }, `running ${type}`);
        const items = await runInRole(role, type, asRecord(rawInput), config, context, sink, deps);
        deps.logger.info({ role, items }, `${type} finished`);
      } catch (e) {
        deps.logger.error(
          {
            role,
            code: isFusionError(e) ? e.code : 'UNEXPECTED',
            err: redactText(e instanceof Error ? e.message : String(e), secrets),
          },
          `${type} failed`,
        );
        throw toConnectorError(e, secrets);
      } finally {
        sink.close();
      }
    });
  };
}
