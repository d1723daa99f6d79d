/**
 * The proxy password's one rule about configurations: it travels from the platform to the proxy
 * server and stops there. The core never sees it, and a configuration it runs is never forwarded again.
 */

/** The configuration without the proxy password (what the platform holds as the source's configuration). */
export function withoutProxyPassword(config: Record<string, unknown>): Record<string, unknown> {
  const { proxyPassword: _dropped, ...rest } = config;
  return rest;
}

/** What the core may see: never the proxy password, and never a configuration that could be forwarded again. */
export function configForCore(config: Record<string, unknown>): Record<string, unknown> {
  return { ...withoutProxyPassword(config), proxyEnabled: false };
}
