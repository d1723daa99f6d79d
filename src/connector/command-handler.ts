import { randomUUID } from 'node:crypto';
import { ConnectorError, ConnectorErrorType, type CommandHandler, type Context } from '@sailpoint/connector-sdk';
import type { CommandRunner } from '../core/command-runner';
import type { CommandType } from '../core/command-types';
import { FusionError, isFusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { runWithLogContext } from '../observability/log-context';
import { invokeProxy, type ProxyTimeouts } from '../proxy-client/proxy-client';
import { detectRole, proxyEnabledWithoutUrl, type ConnectorRole, type RoleEnv } from '../proxy-client/role';
import { passwordMatches } from './password-match';
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
  keepAliveIntervalMs: number;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** What the core may see: never the proxy password, and never a config that could be forwarded again. */
function configForCore(config: Record<string, unknown>): Record<string, unknown> {
  const { proxyPassword: _dropped, ...rest } = config;
  return { ...rest, proxyEnabled: false };
}

/** The platform understands ConnectorError; "not found" must keep its type so reads behave. */
function toConnectorError(e: unknown): unknown {
  if (e instanceof ConnectorError) return e;
  if (isFusionError(e)) {
    const type = e.code === 'ACCOUNT_NOT_FOUND' ? ConnectorErrorType.NotFound : ConnectorErrorType.Generic;
    const err = new ConnectorError(e.message, type);
    (err as Error & { cause?: unknown }).cause = e;
    return err;
  }
  return e;
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
  for await (const item of deps.runner()(type, input, configForCore(config), { signal: ac.signal, logger: deps.logger, jobId, progress: () => sink.keepAlive() })) {
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

/** One SDK handler for one of the nine commands: detect the role, then forward or run. */
export function createCommandHandler(type: CommandType, deps: HandlerDeps): CommandHandler {
  return async (context, rawInput, res) => {
    const requestId = context.invocationId ?? context.requestId;
    await runWithLogContext({ command: type, ...(requestId ? { requestId } : {}) }, async () => {
      // The form's shape becomes the core's here, so a proxy server receives the same shape as direct processing.
      const config = fromPlatformForm(asRecord(await deps.readConfig()));
      const input = asRecord(rawInput);
      const role: ConnectorRole = detectRole(config, deps.env);
      const sink = createResponseSink(res, deps.keepAliveIntervalMs);
      deps.logger.debug({ role }, `running ${type}`);
      try {
        let items: number;
        switch (role) {
          case 'proxy-client':
            items = await runAsProxyClient(type, input, config, sink, deps);
            break;
          case 'proxy-server': {
            // This process is the proxy server: the caller must know the shared secret (spec:
            // "When they differ, the server answers 401 and does not run the command").
            if (!passwordMatches(config.proxyPassword, String(deps.env.PROXY_PASSWORD))) {
              throw new FusionError('PROXY_UNAUTHORIZED', 'The proxy password in the configuration does not match PROXY_PASSWORD of this proxy server; the command was not run. Make the two equal (exact, case-sensitive).');
            }
            items = await runDirect(type, input, config, context, sink, deps);
            break;
          }
          case 'direct':
            if (proxyEnabledWithoutUrl(config, deps.env)) {
              deps.logger.warn({}, 'proxy mode is enabled but no Proxy URL is set: processing directly in this connector');
            }
            items = await runDirect(type, input, config, context, sink, deps);
            break;
        }
        deps.logger.info({ role, items }, `${type} finished`);
      } catch (e) {
        deps.logger.error({ role, code: isFusionError(e) ? e.code : 'UNEXPECTED', err: e instanceof Error ? e.message : String(e) }, `${type} failed`);
        throw toConnectorError(e);
      }
    });
  };
}
