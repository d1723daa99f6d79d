/**
 * The account commands. Aggregation streams; the single-account commands (read, enable, disable,
 * create, update) touch one account with a constant number of platform calls: one account lookup or
 * state read, after a source listing (to find the connector's own source) unless the runner remembers
 * the source's id from a recent listing (own-source-cache.ts).
 */
import { randomUUID } from 'node:crypto';
import type { CommandOutput } from '../command-runner';
import type { AttributeDefinition, FusionConfig } from '../config/fusion-config';
import type { CoreCommand } from '../core-runner';
import type { CoreDeps } from '../core-deps';
import { FusionError } from '../errors';
import type { Logger } from '../ports/logger';
import type { PlatformAccount, PlatformPort, PlatformSource } from '../ports/platform';
import { acquireWithin, CREATE_TOKEN_PREFIX, sourceLockKey } from '../ports/run-lock';
import { aggregateAccounts } from '../aggregation/account-list';
import { tenantOf } from '../config/tenant';
import { AttributeGenerator } from '../aggregation/attribute-generator';
import {
  ACCOUNTS_ATTRIBUTE,
  INTERNAL_ATTRIBUTES,
  KEY_ATTRIBUTE,
  NAME_ATTRIBUTE,
  displayNameOf,
  toItem,
  type AccountItem,
} from '../aggregation/connector-account';
import { COUNTERS_KEY, CounterStore } from '../aggregation/counter-store';
import type { OwnSourceRef } from '../aggregation/own-source-cache';
import { findOwnSource } from '../aggregation/source-resolution';
import { UniqueRegistry } from '../aggregation/unique-registry';
import { withScope } from './command-scope';

/** The connector account's key from a command input: `identity`, or the SDK's `key.simple.id`. */
function inputIdentity(input: Record<string, unknown>, required = true): string | undefined {
  const direct = input.identity;
  if (typeof direct === 'string' && direct !== '') return direct;
  const key = input.key as { simple?: { id?: unknown } } | undefined;
  if (typeof key?.simple?.id === 'string' && key.simple.id !== '') return key.simple.id;
  if (!required) return undefined;
  if (direct !== undefined && direct !== null && direct !== '')
    throw new FusionError(
      'INPUT_INVALID',
      `The account identity (input.identity) must be a non-empty string, not ${Array.isArray(direct) ? 'an array' : typeof direct}`,
      { field: 'identity' },
    );
  throw new FusionError('INPUT_INVALID', 'The command input needs the account identity (input.identity)', {
    field: 'identity',
  });
}

function notFound(identity: string, own: OwnSourceRef): FusionError {
  return new FusionError(
    'ACCOUNT_NOT_FOUND',
    `Connector account ${JSON.stringify(identity)} does not exist on source "${own.name}"`,
    { identity, sourceId: own.id },
  );
}

/**
 * The account on the connector's own source. A remembered source id saves the source listing; when the
 * account is not found there the sources are listed again, and looked up again only if the id changed.
 */
async function locate(
  deps: CoreDeps,
  platform: PlatformPort,
  config: FusionConfig,
  identity: string,
  signal: AbortSignal,
): Promise<PlatformAccount> {
  const remembered = deps.ownSources?.get(config);
  if (remembered) {
    const account = await platform.findAccountByNativeIdentity(remembered.id, identity, { signal });
    if (account) return account;
    deps.ownSources?.forget(config, remembered.id);
  }
  const { own } = await findOwnSource(platform, config, { signal });
  deps.ownSources?.remember(config, own);
  if (remembered?.id === own.id) throw notFound(identity, own);
  const account = await platform.findAccountByNativeIdentity(own.id, identity, { signal });
  if (!account) throw notFound(identity, own);
  return account;
}

export function createAccountListCommand(deps: CoreDeps): CoreCommand {
  return (_input, raw, ctx) =>
    withScope<CommandOutput>(deps, raw, ctx, ({ config, ctx: scoped, platform, detached }) =>
      aggregateAccounts(config, platform, deps, scoped, detached),
    );
}

export function createAccountReadCommand(deps: CoreDeps): CoreCommand {
  return (input, raw, ctx) =>
    withScope<CommandOutput>(deps, raw, ctx, async function* ({ config, platform }) {
      const account = await locate(deps, platform, config, inputIdentity(input) as string, ctx.signal);
      yield toItem(account);
    });
}

function stateCommand(deps: CoreDeps, disabled: boolean): CoreCommand {
  return (input, raw, ctx) =>
    withScope<CommandOutput>(deps, raw, ctx, async function* ({ config, platform, ctx: scoped }) {
      const account = await locate(deps, platform, config, inputIdentity(input) as string, ctx.signal);
      scoped.logger.info(
        { identity: account.nativeIdentity, disabled },
        disabled ? 'Account disabled' : 'Account enabled',
      );
      yield { ...toItem(account), disabled } satisfies AccountItem;
    });
}

/** Enable: what the identity profile's provisioning plan calls on a new, disabled connector account. */
export const createAccountEnableCommand = (deps: CoreDeps): CoreCommand => stateCommand(deps, false);
export const createAccountDisableCommand = (deps: CoreDeps): CoreCommand => stateCommand(deps, true);

/**
 * Create: a connector account from the plan's attributes. Counter and uuid definitions are
 * issued here (counters persisted before the account is returned); `unique` definitions need the
 * registry of every account, so the next aggregation completes them instead of a full listing here.
 */
export function createAccountCreateCommand(deps: CoreDeps): CoreCommand {
  return (input, raw, ctx) =>
    withScope<CommandOutput>(deps, raw, ctx, async function* ({ config, platform, ctx: scoped }) {
      const requested = inputIdentity(input, false);
      const { own } = await findOwnSource(platform, config, { signal: ctx.signal });
      deps.ownSources?.remember(config, own);
      if (requested) {
        const found = await platform.findAccountByNativeIdentity(own.id, requested, { signal: ctx.signal });
        if (found) {
          yield toItem(found);
          return;
        }
      }
      const attrs = input.attributes;
      if (attrs !== undefined && (typeof attrs !== 'object' || attrs === null || Array.isArray(attrs))) {
        throw new FusionError('INPUT_INVALID', 'std:account:create needs input.attributes as an object', {
          field: 'attributes',
        });
      }
      const given = { ...((attrs as Record<string, unknown> | undefined) ?? {}) };
      for (const k of INTERNAL_ATTRIBUTES) delete given[k];
      // Generated values are issued by the connector only: a value from the plan could duplicate one an account holds.
      const ignored = AttributeGenerator.registeredNames(config.attributeDefinitions).filter((n) => n in given);
      for (const n of ignored) delete given[n];
      if (ignored.length)
        scoped.logger.warn(
          { ignored },
          `Ignored the given values of generated attributes ${ignored.join(', ')}: the connector issues them`,
        );
      const key = requested ?? randomUUID();
      const generated = await issueForCreate(deps, config, platform, own, given, key, scoped.logger, ctx.signal);
      const attributes: Record<string, unknown> = {
        ...given,
        ...generated,
        [ACCOUNTS_ATTRIBUTE]: [],
        [KEY_ATTRIBUTE]: key,
      };
      attributes[NAME_ATTRIBUTE] = displayNameOf(attributes, key);
      // Unique values need the registry of every connector account (a full listing), which a
      // single-account command never reads: the next aggregation completes them, and says so here.
      const deferred = config.attributeDefinitions
        .filter((d) => d.type !== 'uuid' && !(d.name in attributes))
        .map((d) => d.name);
      scoped.logger.info(
        { identity: key, deferred },
        deferred.length
          ? `Connector account created; attributes ${deferred.join(', ')} are generated by the next aggregation`
          : 'Connector account created',
      );
      yield { identity: key, disabled: false, attributes } satisfies AccountItem;
    });
}

/**
 * The generated values of a new account: uuids always; counters only while holding the source's
 * lock, since a counter is read, advanced and persisted here, and a concurrent create or
 * aggregation doing the same from the same persisted state would issue the same value. When the
 * lock stays busy (an aggregation runs), or "Enable concurrency check?" is off (aggregations then run
 * without the lock), counters are left to the next aggregation like unique values.
 */
async function issueForCreate(
  deps: CoreDeps,
  config: FusionConfig,
  platform: PlatformPort,
  own: PlatformSource,
  given: Record<string, unknown>,
  key: string,
  logger: Logger,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const label = JSON.stringify(displayNameOf(given, key));
  const hasCounters = config.attributeDefinitions.some((d) => d.type === 'counter');
  const lockKey = sourceLockKey(tenantOf(config.baseurl), own.id);
  const token = `${CREATE_TOKEN_PREFIX}${randomUUID()}`;
  // With "Enable concurrency check?" off aggregations take no lock, so holding it would not keep
  // a running aggregation from issuing the same counter value: counters wait for the next aggregation.
  const guarded = config.concurrencyCheckEnabled;
  // Creates hold the lock for two platform calls: waiting for another create is short; an aggregation is not waited
  // for.
  const locked =
    hasCounters &&
    guarded &&
    (await acquireWithin(deps.runLock, lockKey, token, {
      ttlMs: CREATE_LOCK_TTL_MS,
      waitMs: deps.createLockWaitMs ?? 10_000,
      signal,
      retryWhile: (holder) => holder.startsWith(CREATE_TOKEN_PREFIX),
    }));
  try {
    const state = locked ? (await platform.getSource(own.id, { signal })).connectorAttributes : {};
    const counters = new CounterStore(CounterStore.readState(state), async (values) => {
      await platform.patchSourceConnectorAttributes(own.id, { [COUNTERS_KEY]: values }, { signal });
    });
    if (hasCounters && !guarded) {
      logger.warn(
        { identity: key },
        'Enable concurrency check? is off, so an aggregation may be running unlocked: counter values of this account are issued by the next aggregation',
      );
    } else if (hasCounters && !locked) {
      logger.warn(
        { identity: key },
        'An aggregation of the source is in progress: counter values of this account are issued by the next aggregation',
      );
    }
    const skipTypes: AttributeDefinition['type'][] = locked ? ['normal', 'unique'] : ['normal', 'unique', 'counter'];
    const generated = new AttributeGenerator(config, new UniqueRegistry([]), counters).generate({
      label,
      context: given,
      existing: {},
      skipTypes,
    });
    await counters.flush();
    return generated;
  } finally {
    if (locked) await deps.runLock.release(lockKey, token);
  }
}

const CREATE_LOCK_TTL_MS = 30_000;

interface Change {
  op: string;
  attribute: string;
  value?: unknown;
}

function whyUnsupported(config: FusionConfig, attribute: string): string | undefined {
  if ((INTERNAL_ATTRIBUTES as readonly string[]).includes(attribute)) return 'it is maintained by the connector';
  const def = config.attributeDefinitions.find((d) => d.name === attribute);
  if (def && def.type !== 'normal') return `it is a generated ${def.type} value, issued once and never changed`;
  if (def?.refresh) return 'its definition is recomputed on every aggregation (refresh is on)';
  if (def) return undefined;
  const map = config.attributeMaps.find((m) => m.newAttribute === attribute);
  if (map) return `it is merged from the sources (${map.existingAttributes.join(', ')}); change it in the source`;
  return 'it comes from the authoritative sources; change it there';
}

/**
 * Update: only attributes of `normal` definitions without refresh can be changed (they are kept
 * by later aggregations); every other change is rejected with the reason.
 */
export function createAccountUpdateCommand(deps: CoreDeps): CoreCommand {
  return (input, raw, ctx) =>
    withScope<CommandOutput>(deps, raw, ctx, async function* ({ config, platform, ctx: scoped }) {
      const identity = inputIdentity(input) as string;
      const changes = input.changes;
      if (
        !Array.isArray(changes) ||
        changes.some((c) => typeof c !== 'object' || c === null || typeof (c as Change).attribute !== 'string')
      ) {
        throw new FusionError(
          'INPUT_INVALID',
          'std:account:update needs input.changes: a list of {op, attribute, value}',
          { field: 'changes' },
        );
      }
      for (const c of changes as Change[]) {
        const reason = whyUnsupported(config, c.attribute);
        if (reason)
          throw new FusionError(
            'UNSUPPORTED_CHANGE',
            `Cannot change attribute "${c.attribute}" of account ${identity}: ${reason}`,
            { attribute: c.attribute, op: c.op },
          );
        if (c.op !== 'Set' && c.op !== 'Remove') {
          throw new FusionError(
            'UNSUPPORTED_CHANGE',
            `Cannot ${String(c.op)} attribute "${c.attribute}" of account ${identity}: it is single-valued; use Set or Remove`,
            { attribute: c.attribute, op: c.op },
          );
        }
      }
      const account = await locate(deps, platform, config, identity, ctx.signal);
      const item = toItem(account);
      for (const c of changes as Change[]) {
        if (c.op === 'Set') item.attributes[c.attribute] = c.value;
        else if (c.value === undefined || item.attributes[c.attribute] === c.value) delete item.attributes[c.attribute];
      }
      scoped.logger.info({ identity, attributes: (changes as Change[]).map((c) => c.attribute) }, 'Account updated');
      yield item;
    });
}
