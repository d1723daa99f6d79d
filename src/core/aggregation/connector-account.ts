/**
 * The connector account as the platform stores it, and the output item of the account commands
 * (the SDK's StdAccountListOutput: {identity, disabled, attributes}).
 *
 * Key: `identity` is a UUID minted when the connector account is first created (derived-key.ts), and kept
 * as the account's native identity on the platform forever after (also exposed as attribute `id`).
 * It is independent of any source value, so renaming a person never changes the key, and
 * "Reset accounts?" really creates new accounts.
 */
import type { CommandOutput } from '../command-runner';
import type { PlatformAccount } from '../ports/platform';

/** Attributes the connector maintains itself on every account. */
export const KEY_ATTRIBUTE = 'id';
export const NAME_ATTRIBUTE = 'name';
/** Platform ids of the source accounts fused into this account. */
export const ACCOUNTS_ATTRIBUTE = 'accounts';
/** Names of the sources those accounts come from. */
export const SOURCES_ATTRIBUTE = 'sources';
/** Set when a reviewer linked the account to an identity: the platform correlates the new account with it. */
export const IDENTITY_ATTRIBUTE = 'identityId';
export const INTERNAL_ATTRIBUTES = [
  KEY_ATTRIBUTE,
  NAME_ATTRIBUTE,
  ACCOUNTS_ATTRIBUTE,
  SOURCES_ATTRIBUTE,
  IDENTITY_ATTRIBUTE,
] as const;

export interface AccountItem extends CommandOutput {
  identity: string;
  disabled: boolean;
  attributes: Record<string, unknown>;
}

export function stringList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string' && v !== '') return [v];
  return [];
}

export function displayNameOf(attributes: Record<string, unknown>, fallback: string): string {
  for (const k of ['displayName', 'name', 'uid']) {
    const v = attributes[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return fallback;
}

export function toItem(account: PlatformAccount): AccountItem {
  return {
    identity: account.nativeIdentity,
    disabled: account.disabled,
    attributes: { ...account.attributes, [KEY_ATTRIBUTE]: account.nativeIdentity },
  };
}
