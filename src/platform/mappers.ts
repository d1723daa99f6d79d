import type {
  PlatformAccount,
  PlatformIdentity,
  PlatformSource,
  PlatformTask,
  SchemaAttribute,
  SourceSchema,
  TaskState,
} from '../core/ports/platform';

/** Library response models -> the core's port types. Inputs are loosely typed JSON from the wire. */
type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function toSource(raw: unknown): PlatformSource {
  const s = obj(raw);
  const connectorAttributes = obj(s.connectorAttributes);
  const owner = obj(s.owner);
  // A managed source's "Enabled" setting lives in its connector attributes.
  const enabledFlag = typeof s.enabled === 'boolean' ? s.enabled : connectorAttributes.enabled;
  return {
    id: str(s.id) ?? '',
    name: str(s.name) ?? '',
    enabled: enabledFlag !== false && enabledFlag !== 'false',
    authoritative: s.authoritative === true,
    owner: str(owner.id) ? { id: str(owner.id) as string, name: str(owner.name) ?? '' } : undefined,
    connectorAttributes,
  };
}

export function toAccount(raw: unknown): PlatformAccount {
  const a = obj(raw);
  return {
    id: str(a.id) ?? '',
    sourceId: str(a.sourceId) ?? '',
    sourceName: str(a.sourceName) ?? '',
    nativeIdentity: str(a.nativeIdentity) ?? '',
    name: str(a.name) ?? '',
    identityId: str(a.identityId) ?? str(obj(a.identity).id),
    disabled: a.disabled === true,
    isMachine: a.isMachine === true,
    attributes: obj(a.attributes),
    created: str(a.created),
    modified: str(a.modified),
  };
}

/**
 * The fields of an identity document toIdentity reads: searches ask for these only (`queryResultFilter`) and
 * without nested objects, so an identity's accounts and access (entitlements, roles, access profiles: often
 * most of the document) stay on the platform. No command reads them: a baseline page is a third of its size.
 */
export const IDENTITY_FIELDS = ['id', 'name', 'attributes'];

export function toIdentity(raw: unknown): PlatformIdentity {
  const d = obj(raw);
  return { id: str(d.id) ?? '', name: str(d.name) ?? '', attributes: obj(d.attributes) };
}

const SCHEMA_TYPES = new Set<SchemaAttribute['type']>(['STRING', 'LONG', 'INT', 'BOOLEAN', 'DATE']);

export function toSchema(raw: unknown): SourceSchema {
  const s = obj(raw);
  const attributes = Array.isArray(s.attributes)
    ? s.attributes.map((x): SchemaAttribute => {
        const a = obj(x);
        const type = String(a.type ?? 'STRING').toUpperCase() as SchemaAttribute['type'];
        return {
          name: str(a.name) ?? '',
          type: SCHEMA_TYPES.has(type) ? type : 'STRING',
          multi: a.isMulti === true,
          entitlement: a.isEntitlement === true,
          description: str(a.description) || undefined,
        };
      })
    : [];
  return {
    id: str(s.id),
    name: str(s.name) ?? '',
    nativeObjectType: str(s.nativeObjectType) ?? '',
    identityAttribute: str(s.identityAttribute),
    displayAttribute: str(s.displayAttribute),
    attributes,
  };
}

function taskState(t: Json): TaskState {
  const status = str(t.completionStatus);
  if (status) {
    if (status === 'SUCCESS' || status === 'WARNING' || status === 'ERROR' || status === 'TERMINATED') return status;
    return 'ERROR'; // TEMPERROR and anything new: not a success
  }
  if (t.completed) return 'SUCCESS';
  return t.launched ? 'RUNNING' : 'PENDING';
}

export function toTask(raw: unknown): PlatformTask {
  const t = obj(raw);
  const messages = Array.isArray(t.messages)
    ? t.messages.map((m) => {
        const mm = obj(m);
        return str(obj(mm.localizedText).message) ?? str(mm.key) ?? str(mm.text) ?? '';
      })
    : [];
  return { id: str(t.id) ?? '', state: taskState(t), messages: messages.filter((m) => m !== '') };
}
