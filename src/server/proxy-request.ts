import { COMMAND_TYPES, isCommandType } from '../core/command-types';
import { FusionError } from '../core/errors';
import type { ProxyCommand } from '../dispatch/command-dispatcher';
import { configForCore } from '../core/config/proxy-password';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface ProxyRequestShape {
  type: unknown;
  input: unknown;
  config: Record<string, unknown>;
  password: unknown;
}

/** Structural checks that need no secret: the body is an object and carries a config object. */
export function readProxyBody(body: unknown): ProxyRequestShape {
  if (!isPlainObject(body)) {
    throw new FusionError('INPUT_INVALID', 'the request body must be a JSON object {type, input, config}');
  }
  if (!isPlainObject(body.config)) {
    throw new FusionError('CONFIG_INVALID', 'config must be an object (the full connector configuration)');
  }
  return { type: body.type, input: body.input, config: body.config, password: body.config.proxyPassword };
}

/**
 * The command as it may be run: proxyPassword removed and proxyEnabled forced to false, so a
 * server that is itself configured as a proxy client never forwards it again.
 */
export function toProxyCommand(shape: ProxyRequestShape, requestId: string): ProxyCommand {
  if (!isCommandType(shape.type)) {
    const given =
      typeof shape.type === 'string'
        ? `"${shape.type.slice(0, 80)}"`
        : `a ${shape.type === null ? 'null' : typeof shape.type}`;
    throw new FusionError(
      'COMMAND_UNKNOWN',
      `unknown command type ${given}; expected one of ${COMMAND_TYPES.join(', ')}`,
    );
  }
  if (shape.input !== undefined && shape.input !== null && !isPlainObject(shape.input)) {
    throw new FusionError('INPUT_INVALID', 'input must be an object when present');
  }
  return {
    type: shape.type,
    input: isPlainObject(shape.input) ? shape.input : {},
    config: configForCore(shape.config),
    requestId,
  };
}
