/** The nine commands of the spec's "Command values for type" table. */
export const COMMAND_TYPES = [
  'std:test-connection',
  'std:account:list',
  'std:account:read',
  'std:account:enable',
  'std:account:disable',
  'std:account:create',
  'std:account:update',
  'std:account:discover-schema',
  'std:entitlement:list',
] as const;

export type CommandType = (typeof COMMAND_TYPES)[number];

export function isCommandType(value: unknown): value is CommandType {
  return typeof value === 'string' && (COMMAND_TYPES as readonly string[]).includes(value);
}
