/**
 * std:account:discover-schema and std:entitlement:list. The schema is the union of the connector's
 * own attributes, the configured sources' account schemas (first source in configuration order
 * wins a name), the attribute mappings and the definitions. A list merge makes an attribute
 * multi-valued and entitlement-type; its distinct values are what std:entitlement:list returns.
 */
import type { CommandOutput } from '../command-runner';
import type { FusionConfig } from '../config/fusion-config';
import type { CoreCommand } from '../core-runner';
import type { CoreDeps } from '../core-deps';
import { FusionError } from '../errors';
import type { SchemaAttribute } from '../ports/platform';
import { ACCOUNTS_ATTRIBUTE, KEY_ATTRIBUTE, NAME_ATTRIBUTE, SOURCES_ATTRIBUTE } from '../aggregation/connector-account';
import { findOwnSource } from '../aggregation/source-resolution';
import { withScope } from './command-scope';

export interface SchemaOutputAttribute {
  name: string;
  type: 'string' | 'long' | 'int' | 'boolean';
  description: string;
  multi: boolean;
  entitlement: boolean;
  managed: boolean;
}

const TYPE: Record<SchemaAttribute['type'], SchemaOutputAttribute['type']> = {
  STRING: 'string',
  LONG: 'long',
  INT: 'int',
  BOOLEAN: 'boolean',
  DATE: 'string',
};

/** Names of the entitlement-type attributes: list merges (all source attributes when the default merge is list). */
function entitlementAttributes(config: FusionConfig, sourceAttributeNames: Iterable<string> = []): string[] {
  const names = new Set(config.attributeMaps.filter((m) => m.attributeMerge === 'list').map((m) => m.newAttribute));
  if (config.attributeMerge === 'list') {
    const mapped = new Set(config.attributeMaps.map((m) => m.newAttribute));
    for (const n of sourceAttributeNames) if (!mapped.has(n)) names.add(n);
  }
  return [...names];
}

export function createDiscoverSchemaCommand(deps: CoreDeps): CoreCommand {
  return (_input, raw, ctx) =>
    withScope<CommandOutput>(deps, raw, ctx, async function* ({ config, platform }) {
      const opts = { signal: ctx.signal };
      const { all } = await findOwnSource(platform, config, opts);
      const byName = new Map(all.map((s) => [s.name, s]));
      const missing = config.sources.filter((n) => !byName.has(n));
      if (missing.length) {
        throw new FusionError(
          'SOURCE_NOT_FOUND',
          `Authoritative sources not found (exact, case-sensitive): ${missing.map((m) => JSON.stringify(m)).join(', ')}; sources that exist: ${all.map((s) => JSON.stringify(s.name)).join(', ')}`,
          { missing },
        );
      }
      const attrs = new Map<string, SchemaOutputAttribute>();
      const put = (a: SchemaOutputAttribute) => {
        if (!attrs.has(a.name)) attrs.set(a.name, a);
      };
      put({
        name: KEY_ATTRIBUTE,
        type: 'string',
        description: 'Connector account key (a UUID minted at creation)',
        multi: false,
        entitlement: false,
        managed: false,
      });
      put({
        name: NAME_ATTRIBUTE,
        type: 'string',
        description: 'Display name',
        multi: false,
        entitlement: false,
        managed: false,
      });
      put({
        name: ACCOUNTS_ATTRIBUTE,
        type: 'string',
        description: 'Platform ids of the fused source accounts',
        multi: true,
        entitlement: false,
        managed: false,
      });
      put({
        name: SOURCES_ATTRIBUTE,
        type: 'string',
        description: 'Sources of the fused accounts',
        multi: true,
        entitlement: false,
        managed: false,
      });
      const sourceTypes = new Map<string, SchemaAttribute>();
      const defaultList = config.attributeMerge === 'list';
      const mapped = new Set(config.attributeMaps.map((m) => m.newAttribute));
      for (const name of config.sources) {
        const source = byName.get(name)!;
        const schemas = await platform.getSourceSchemas(source.id, opts);
        const account = schemas.find((s) => s.nativeObjectType === 'account' || s.name === 'account') ?? schemas[0];
        for (const a of account?.attributes ?? []) {
          if (!sourceTypes.has(a.name)) sourceTypes.set(a.name, a);
          if (mapped.has(a.name)) continue;
          put({
            name: a.name,
            type: defaultList ? 'string' : TYPE[a.type],
            description: a.description ?? `${a.name} from ${name}`,
            multi: defaultList || a.multi,
            entitlement: defaultList,
            managed: false,
          });
        }
      }
      for (const m of config.attributeMaps) {
        const list = m.attributeMerge === 'list';
        const origin = m.existingAttributes.map((n) => sourceTypes.get(n)).find(Boolean);
        attrs.set(m.newAttribute, {
          name: m.newAttribute,
          type: list || m.attributeMerge === 'concatenate' || !origin ? 'string' : TYPE[origin.type],
          description: `${m.attributeMerge} merge of ${m.existingAttributes.join(', ')}`,
          multi: list,
          entitlement: list,
          managed: false,
        });
      }
      for (const d of config.attributeDefinitions) {
        attrs.set(d.name, {
          name: d.name,
          type: 'string',
          description: `${d.type} attribute defined by ${d.expression || 'a UUID'}`,
          multi: false,
          entitlement: false,
          managed: false,
        });
      }
      const groupAttribute = [...attrs.values()].find((a) => a.entitlement)?.name;
      yield {
        identityAttribute: KEY_ATTRIBUTE,
        displayAttribute: NAME_ATTRIBUTE,
        ...(groupAttribute ? { groupAttribute } : {}),
        attributes: [...attrs.values()],
      };
    });
}

/**
 * The distinct values of the entitlement-type attributes on the connector's accounts. input.type
 * names one attribute, or is absent / "group" for all of them.
 */
export function createEntitlementListCommand(deps: CoreDeps): CoreCommand {
  return (input, raw, ctx) =>
    withScope<CommandOutput>(deps, raw, ctx, async function* ({ config, platform }) {
      const opts = { signal: ctx.signal };
      const { own } = await findOwnSource(platform, config, opts);
      const type = typeof input.type === 'string' && input.type !== '' ? input.type : 'group';
      const values = new Map<string, string>();
      for await (const account of platform.listAccounts({ sourceId: own.id }, opts)) {
        const names =
          config.attributeMerge === 'list' ? Object.keys(account.attributes) : entitlementAttributes(config);
        for (const name of names) {
          if (type !== 'group' && name !== type) continue;
          if (
            name === ACCOUNTS_ATTRIBUTE ||
            name === SOURCES_ATTRIBUTE ||
            name === KEY_ATTRIBUTE ||
            name === NAME_ATTRIBUTE
          )
            continue;
          const v = account.attributes[name];
          for (const x of Array.isArray(v) ? v : v === undefined || v === null ? [] : [v])
            if (!values.has(String(x))) values.set(String(x), name);
        }
      }
      for (const [value, attribute] of values) {
        yield { identity: value, uuid: value, type, attributes: { id: value, name: value, attribute } };
      }
    });
}
