/**
 * Which part the connector plays for one command (spec, "Role detection by the connector").
 *
 * - `proxy-server`: proxyEnabled is true AND the PROXY_PASSWORD environment variable is set.
 * - `proxy-client`: proxyEnabled is true AND a proxy URL is set (and the server condition is not met).
 * - `direct`: everything else.
 *
 * Decisions for values the spec does not pin down:
 * - proxyEnabled counts as true for the boolean `true` and for the exact string "true", because
 *   hand-edited or form-built configurations sometimes carry toggles as strings; this is the
 *   same rule as the core's configuration reader (src/core/config/config-reader.ts). Every
 *   other value ("TRUE", "1", "yes", 1, null, missing) is false: a typo must not send
 *   credentials to a proxy (and the core then reports a non-boolean value as invalid).
 * - An empty or blank PROXY_PASSWORD is "not set": a blank secret cannot authenticate anything,
 *   so a process with `PROXY_PASSWORD=` is not a server.
 * - A proxy URL is "set" when it is a string that is not blank. Its syntax is checked later by
 *   the proxy client, which then fails with a message naming the bad value instead of
 *   silently processing directly.
 */
export type ConnectorRole = 'proxy-server' | 'proxy-client' | 'direct';

/** The environment of the process (process.env satisfies it); only PROXY_PASSWORD is read. */
export type RoleEnv = { readonly [name: string]: string | undefined };

export function isProxyEnabled(value: unknown): boolean {
  return value === true || value === 'true';
}

function isSetString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

export function detectRole(config: Readonly<Record<string, unknown>>, env: RoleEnv): ConnectorRole {
  if (!isProxyEnabled(config.proxyEnabled)) return 'direct';
  if (isSetString(env.PROXY_PASSWORD)) return 'proxy-server';
  if (isSetString(config.proxyUrl)) return 'proxy-client';
  return 'direct';
}

/**
 * True when the operator switched proxy mode on but gave no URL and the process is no server:
 * the spec says "direct", and the connector logs a warning so the mistake is visible.
 */
export function proxyEnabledWithoutUrl(config: Readonly<Record<string, unknown>>, env: RoleEnv): boolean {
  return isProxyEnabled(config.proxyEnabled) && detectRole(config, env) === 'direct';
}
