import type { FastifyPluginAsync } from 'fastify';

/**
 * Marks a plugin as not encapsulated, as fastify-plugin does, so its hooks and error
 * handler apply to the whole app (one less dependency for one symbol).
 */
export function globalPlugin<T extends Record<string, unknown>>(
  plugin: FastifyPluginAsync<T>,
  name: string,
): FastifyPluginAsync<T> {
  const p = plugin as FastifyPluginAsync<T> & Record<symbol, unknown>;
  p[Symbol.for('skip-override')] = true;
  p[Symbol.for('fastify.display-name')] = name;
  return p;
}
