import type { AccessProfileRecord, AccountRecord, IdentityRecord, SourceRecord } from './records';
import type { Tenant } from './store';
import { resolvePath } from './search-query';

/**
 * Records -> the response models of sailpoint-api-client (v3 Source, Account, IdentityDocument, AccessProfile, Schema).
 */

export function sourceView(s: SourceRecord): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    owner: { type: 'IDENTITY', id: s.owner.id, name: s.owner.name },
    cluster: null,
    type: s.type,
    connector: s.connector,
    connectorClass: 'sailpoint.connector.OpenConnectorAdapter',
    connectorAttributes: { ...s.connectorAttributes, enabled: s.enabled },
    deleteThreshold: 10,
    authoritative: s.authoritative,
    healthy: s.enabled,
    status: s.enabled ? 'SOURCE_STATE_HEALTHY' : 'SOURCE_STATE_UNCHECKED_SOURCE',
    since: s.created,
    connectorId: s.connector,
    connectorName: s.type,
    connectionType: 'direct',
    features: ['PROVISIONING', 'ENABLE', 'DISCOVER_SCHEMA'],
    schemas: [{ type: 'CONNECTOR_SCHEMA', id: `${s.id}-account`, name: 'account' }],
    created: s.created,
    modified: s.modified,
  };
}

export function schemaView(s: SourceRecord): Record<string, unknown> {
  return {
    id: `${s.id}-account`,
    name: 'account',
    nativeObjectType: 'User',
    identityAttribute: s.identityAttribute,
    displayAttribute: s.displayAttribute,
    hierarchyAttribute: null,
    includePermissions: false,
    features: [],
    configuration: {},
    attributes: s.schemaAttributes.map((a) => ({
      name: a.name,
      type: a.type,
      schema: null,
      description: a.description ?? '',
      isMulti: a.isMulti,
      isEntitlement: a.isEntitlement,
      isGroup: false,
    })),
    created: s.created,
    modified: s.modified,
  };
}

export function accountView(a: AccountRecord, tenant: Tenant): Record<string, unknown> {
  const src = tenant.sources.get(a.sourceId);
  const ident = a.identityId ? tenant.identities.get(a.identityId) : undefined;
  return {
    id: a.id,
    name: a.name,
    created: a.created,
    modified: a.modified,
    sourceId: a.sourceId,
    sourceName: src?.name ?? null,
    identityId: a.identityId,
    cloudLifecycleState: ident ? 'active' : null,
    identityState: ident ? (ident.inactive ? 'INACTIVE_LONG_TERM' : 'ACTIVE') : null,
    connectionType: 'direct',
    isMachine: a.isMachine,
    attributes: a.attributes,
    authoritative: src?.authoritative ?? false,
    description: null,
    disabled: a.disabled,
    locked: a.locked,
    nativeIdentity: a.nativeIdentity,
    systemAccount: false,
    uncorrelated: !a.identityId,
    uuid: a.uuid ?? null,
    manuallyCorrelated: a.manuallyCorrelated,
    hasEntitlements: false,
    identity: ident ? { id: ident.id, type: 'IDENTITY', name: ident.name } : undefined,
    sourceOwner: src ? { id: src.owner.id, type: 'IDENTITY', name: src.owner.name } : null,
  };
}

export function accessProfileView(ap: AccessProfileRecord, tenant: Tenant): Record<string, unknown> {
  const src = tenant.sources.get(ap.sourceId);
  const owner = tenant.identities.get(ap.ownerId);
  return {
    id: ap.id,
    name: ap.name,
    description: ap.description,
    created: ap.created,
    modified: ap.modified,
    enabled: ap.enabled,
    owner: { type: 'IDENTITY', id: ap.ownerId, name: owner?.name ?? '' },
    source: { id: ap.sourceId, type: 'SOURCE', name: src?.name ?? '' },
    entitlements: [],
    requestable: ap.requestable,
    accessRequestConfig: null,
    revocationRequestConfig: null,
    segments: [],
    provisioningCriteria: null,
  };
}

function attr(i: IdentityRecord, key: string): string | undefined {
  const v = i.attributes[key];
  return typeof v === 'string' ? v : undefined;
}

/** The search document of an identity (index `identities`), with nested accounts and access. */
export function identityDocument(i: IdentityRecord, tenant: Tenant): Record<string, unknown> {
  const accounts = [...tenant.accountIdsOfIdentity(i.id)].flatMap((id) => {
    const a = tenant.accounts.get(id);
    if (!a) return [];
    const src = tenant.sources.get(a.sourceId);
    return [
      {
        id: a.id,
        name: a.name,
        accountId: a.nativeIdentity,
        source: { id: a.sourceId, name: src?.name ?? '', type: src?.type ?? '' },
        disabled: a.disabled,
        locked: a.locked,
        privileged: false,
        manuallyCorrelated: a.manuallyCorrelated,
        passwordLastSet: null,
        entitlementAttributes: null,
        created: a.created,
      },
    ];
  });
  const access = i.access.flatMap((apId) => {
    const ap = tenant.accessProfiles.get(apId);
    if (!ap) return [];
    const src = tenant.sources.get(ap.sourceId);
    return [
      {
        id: ap.id,
        name: ap.name,
        displayName: ap.name,
        type: 'ACCESS_PROFILE',
        description: ap.description,
        source: { id: ap.sourceId, name: src?.name ?? '' },
        owner: { id: ap.ownerId },
      },
    ];
  });
  return {
    id: i.id,
    name: i.name,
    _type: 'identity',
    type: 'identity',
    displayName: attr(i, 'displayName') ?? i.name,
    firstName: attr(i, 'firstName'),
    lastName: attr(i, 'lastName'),
    email: attr(i, 'email'),
    employeeNumber: attr(i, 'employeeNumber'),
    created: i.created,
    modified: i.modified,
    inactive: i.inactive,
    protected: false,
    status: i.inactive ? 'INACTIVE' : 'ACTIVE',
    isManager: false,
    attributes: { ...i.attributes, cloudLifecycleState: i.inactive ? 'inactive' : 'active' },
    disabled: i.inactive,
    locked: false,
    processingState: null,
    accounts,
    accountCount: accounts.length,
    access,
    accessCount: access.length,
    accessProfileCount: access.length,
    entitlementCount: 0,
    roleCount: 0,
    tags: [],
    tagsCount: 0,
  };
}

const TOP_ATTRS = new Set(['displayName', 'firstName', 'lastName', 'email', 'employeeNumber']);

/**
 * Resolves a search field on an identity without building its whole document (the hot path of a
 * search over 100k identities); falls back to the document for the rare nested paths.
 */
export function resolveIdentityField(tenant: Tenant, i: IdentityRecord, path: string): unknown[] {
  if (path === 'id') return [i.id];
  if (path === 'name') return [i.name];
  if (TOP_ATTRS.has(path))
    return path === 'displayName' ? [i.attributes['displayName'] ?? i.name] : [i.attributes[path]];
  if (path.startsWith('attributes.')) {
    const v = i.attributes[path.slice('attributes.'.length)];
    return Array.isArray(v) ? v : [v];
  }
  if (path === 'access.id') return i.access;
  if (path === 'created') return [i.created];
  if (path === 'modified') return [i.modified];
  return resolvePath(identityDocument(i, tenant), path);
}
