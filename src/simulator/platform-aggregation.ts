import { errorMessage } from '../core/errors';
import type { AccountRecord } from './records';
import type { Tenant } from './store';

/** Runs one connector command and streams its output objects (direct core, or a proxy client). */
export type InvokeFn = (type: string, input: Record<string, unknown>) => AsyncIterable<Record<string, unknown>>;

export interface PlatformAggregationOptions {
  tenant: Tenant;
  invoke: InvokeFn;
  /** The connector's source (default: the tenant's fusion source). */
  sourceId?: string;
  /** Full aggregation: connector accounts absent from the output are removed (default true). */
  full?: boolean;
  /** Extra input for std:account:list. */
  listInput?: Record<string, unknown>;
  /** Run the identity profile's enable action for new disabled accounts (default true). */
  enableNew?: boolean;
  /** Concurrent std:account:enable calls (default 4). */
  enableConcurrency?: number;
  /**
   * The identity an incoming account correlates to, if any; otherwise a new identity is created
   * (the connector is authoritative). Default: `attributes.identityId` when it names an existing identity.
   */
  correlate?: (item: AggregatedItem, tenant: Tenant) => string | undefined;
}

/** One item of std:account:list output, as the SDK's StdAccountListOutput. */
export interface AggregatedItem {
  identity: string;
  uuid?: string;
  disabled?: boolean;
  locked?: boolean;
  attributes: Record<string, unknown>;
}

export interface PlatformAggregationResult {
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
  identitiesCreated: number;
  identitiesRemoved: number;
  enabled: number;
  /** Output objects that were not accounts (no `identity`), ignored like the platform does. */
  skipped: number;
  /** Enable calls that failed (the account stays disabled), with the reason. */
  enableErrors: { identity: string; message: string }[];
}

function asItem(raw: Record<string, unknown>): AggregatedItem | undefined {
  const identity = raw['identity'];
  if (typeof identity !== 'string' || identity === '') return undefined;
  const attrs = raw['attributes'];
  return {
    identity,
    uuid: typeof raw['uuid'] === 'string' ? raw['uuid'] : undefined,
    disabled: typeof raw['disabled'] === 'boolean' ? raw['disabled'] : undefined,
    locked: typeof raw['locked'] === 'boolean' ? raw['locked'] : undefined,
    attributes:
      attrs && typeof attrs === 'object' && !Array.isArray(attrs) ? { ...(attrs as Record<string, unknown>) } : {},
  };
}

function defaultCorrelate(item: AggregatedItem, tenant: Tenant): string | undefined {
  const id = item.attributes['identityId'];
  return typeof id === 'string' && tenant.identities.has(id) ? id : undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function accountName(item: AggregatedItem, tenant: Tenant, sourceId: string): string {
  const displayAttr = tenant.sources.get(sourceId)?.displayAttribute ?? 'name';
  const v = item.attributes[displayAttr] ?? item.attributes['name'];
  return typeof v === 'string' && v !== '' ? v : item.identity;
}

/** Identity attributes taken from an account of the authoritative connector source. */
function identityAttributes(a: AccountRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a.attributes)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

/**
 * The platform's side of an account aggregation of the connector source: run std:account:list, create
 * or update the source's accounts (keyed by native identity), remove the ones a full aggregation no longer
 * returns, create an identity for each new account, then run the identity profile's provisioning plan:
 * std:account:enable for each new disabled account, applying the returned account.
 */
export async function runPlatformAggregation(opts: PlatformAggregationOptions): Promise<PlatformAggregationResult> {
  const { tenant, invoke } = opts;
  const sourceId = opts.sourceId ?? tenant.meta.fusionSourceId;
  if (!sourceId) throw new Error('runPlatformAggregation: the tenant has no connector source; pass sourceId');
  tenant.source(sourceId);
  const correlate = opts.correlate ?? defaultCorrelate;
  const result: PlatformAggregationResult = {
    created: 0,
    updated: 0,
    unchanged: 0,
    removed: 0,
    identitiesCreated: 0,
    identitiesRemoved: 0,
    enabled: 0,
    skipped: 0,
    enableErrors: [],
  };
  const seen = new Set<string>();
  const newDisabled: AccountRecord[] = [];

  for await (const raw of invoke('std:account:list', { ...(opts.listInput ?? {}) })) {
    const item = asItem(raw);
    if (!item) {
      result.skipped++;
      continue;
    }
    seen.add(item.identity);
    const existing = tenant.accountByNative(sourceId, item.identity);
    if (existing) {
      const changes: Partial<AccountRecord> = {};
      if (!sameJson(existing.attributes, item.attributes)) changes.attributes = item.attributes;
      if (item.disabled !== undefined && item.disabled !== existing.disabled) changes.disabled = item.disabled;
      if (item.locked !== undefined && item.locked !== existing.locked) changes.locked = item.locked;
      if (item.uuid !== undefined && item.uuid !== existing.uuid) changes.uuid = item.uuid;
      const name = accountName(item, tenant, sourceId);
      if (name !== existing.name) changes.name = name;
      if (Object.keys(changes).length === 0) result.unchanged++;
      else {
        tenant.updateAccount(existing.id, changes);
        result.updated++;
      }
      continue;
    }
    const now = tenant.now();
    const account = tenant.addAccount({
      id: tenant.newId(),
      sourceId,
      nativeIdentity: item.identity,
      name: accountName(item, tenant, sourceId),
      uuid: item.uuid,
      disabled: item.disabled ?? false,
      locked: item.locked ?? false,
      isMachine: false,
      manuallyCorrelated: false,
      attributes: item.attributes,
      created: now,
      modified: now,
    });
    result.created++;
    let identityId = correlate(item, tenant);
    if (!identityId) {
      identityId = tenant.newId();
      tenant.addIdentity({
        id: identityId,
        name: account.name,
        attributes: identityAttributes(account),
        access: [],
        inactive: false,
        created: now,
        modified: now,
      });
      result.identitiesCreated++;
    }
    tenant.updateAccount(account.id, { identityId });
    if (account.disabled) newDisabled.push(account);
  }

  if (opts.full ?? true) {
    for (const a of [...tenant.accountsOfSource(sourceId).values()]) {
      if (seen.has(a.nativeIdentity)) continue;
      const identityId = a.identityId;
      tenant.removeAccount(a.id);
      result.removed++;
      if (identityId && tenant.accountIdsOfIdentity(identityId).size === 0 && tenant.identities.has(identityId)) {
        tenant.removeIdentity(identityId);
        result.identitiesRemoved++;
      }
    }
  }

  if (opts.enableNew ?? true) {
    const queue = [...newDisabled];
    const worker = async (): Promise<void> => {
      for (let a = queue.shift(); a; a = queue.shift()) {
        try {
          let last: AggregatedItem | undefined;
          for await (const raw of invoke('std:account:enable', {
            identity: a.nativeIdentity,
            uuid: a.uuid,
            key: { simple: { id: a.nativeIdentity } },
          })) {
            last = asItem(raw) ?? last;
          }
          const changes: Partial<AccountRecord> = { disabled: last?.disabled ?? false };
          if (last) changes.attributes = last.attributes;
          if (last?.uuid) changes.uuid = last.uuid;
          tenant.updateAccount(a.id, changes);
          if (!changes.disabled) result.enabled++;
        } catch (e) {
          result.enableErrors.push({ identity: a.nativeIdentity, message: errorMessage(e) });
        }
      }
    };
    const n = Math.max(1, opts.enableConcurrency ?? 4);
    await Promise.all(Array.from({ length: Math.min(n, queue.length) }, worker));
  }
  return result;
}

/**
 * Makes every successful aggregation task of the connector source (POST load-accounts, then polling)
 * run the platform side of the aggregation against `invoke`. Returns the latest result and a detach.
 */
export function attachConnectorAggregation(
  sim: {
    tenant: Tenant;
    control: { onAggregationSuccess(hook: ((sourceId: string) => Promise<void>) | undefined): void };
  },
  invoke: InvokeFn,
  opts: Omit<PlatformAggregationOptions, 'tenant' | 'invoke'> = {},
): { last(): PlatformAggregationResult | undefined; detach(): void } {
  const sourceId = opts.sourceId ?? sim.tenant.meta.fusionSourceId;
  let last: PlatformAggregationResult | undefined;
  sim.control.onAggregationSuccess(async (id) => {
    if (id !== sourceId) return;
    last = await runPlatformAggregation({ ...opts, tenant: sim.tenant, invoke, sourceId });
  });
  return { last: () => last, detach: () => sim.control.onAggregationSuccess(undefined) };
}
