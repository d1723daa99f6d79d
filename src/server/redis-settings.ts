import { readFileSync } from 'node:fs';
import type { RedisOptions } from 'ioredis';
import { FusionError, errorMessage } from '../core/errors';
import { ErrorSafeConnector } from './error-safe-connector';
import type { ServerEnv } from './env';

/** Where every Redis connection of the process goes, and how it authenticates: one place for all of them. */
export interface RedisTarget {
  url: string;
  /** Merged into each connection's own options (ioredis: what the URL sets wins; the env checks forbid both). */
  options: RedisOptions;
}

/**
 * The Redis target of the environment. The password comes as is from REDIS_PASSWORD (a Secret),
 * so nothing has to URL-encode it and nobody has to decode it; a private CA is read once, here,
 * so a wrong path stops the process at boot, naming the variable.
 */
export function redisTarget(
  env: Pick<ServerEnv, 'REDIS_URL' | 'REDIS_USERNAME' | 'REDIS_PASSWORD' | 'REDIS_TLS_CA_FILE'>,
): RedisTarget | undefined {
  if (!env.REDIS_URL) return undefined;
  // Every connection of the process (and its BullMQ duplicates) keeps a socket's second error from crashing it.
  const options: RedisOptions = { Connector: ErrorSafeConnector };
  if (env.REDIS_USERNAME !== undefined) options.username = env.REDIS_USERNAME;
  if (env.REDIS_PASSWORD !== undefined) options.password = env.REDIS_PASSWORD;
  if (env.REDIS_TLS_CA_FILE !== undefined) {
    let ca: string;
    try {
      ca = readFileSync(env.REDIS_TLS_CA_FILE, 'utf8');
    } catch (e) {
      throw new FusionError(
        'CONFIG_INVALID',
        `invalid environment: REDIS_TLS_CA_FILE cannot be read: ${errorMessage(e)}`,
        {
          variables: ['REDIS_TLS_CA_FILE'],
        },
      );
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----'))
      throw new FusionError('CONFIG_INVALID', 'invalid environment: REDIS_TLS_CA_FILE holds no PEM certificate', {
        variables: ['REDIS_TLS_CA_FILE'],
      });
    options.tls = { ca };
  }
  return { url: env.REDIS_URL, options };
}
