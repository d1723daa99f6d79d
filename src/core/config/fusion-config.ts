import { parseAccountFilterOrThrow } from './account-filter';
import { readApiUseSettings, type ApiUseSettings } from './api-use-settings';
import { ConfigReader, isRecord } from './config-reader';
import { errorMessage, isFusionError } from '../errors';
import { parseMatchingSection, type MatchingSection } from './matching-section';

export const MERGE_STRATEGIES = ['first', 'list', 'concatenate'] as const;
export const MAP_MERGE_STRATEGIES = ['first', 'list', 'concatenate', 'source'] as const;
export const DEFINITION_TYPES = ['normal', 'unique', 'uuid', 'counter'] as const;
export const CASE_OPTIONS = ['same', 'lower', 'upper', 'capitalize'] as const;
export const LEVELS = ['error', 'warn', 'info', 'debug'] as const;

export type MergeStrategy = (typeof MAP_MERGE_STRATEGIES)[number];
export type DefinitionType = (typeof DEFINITION_TYPES)[number];
export type CaseOption = (typeof CASE_OPTIONS)[number];
export type Level = (typeof LEVELS)[number];

export interface AttributeMap {
  newAttribute: string;
  /** Source attribute names, case-sensitive, tried in order (the new name itself is tried last). */
  existingAttributes: string[];
  attributeMerge: MergeStrategy;
  /** For attributeMerge = source: the only source that feeds the attribute. */
  source?: string;
}

export interface AttributeDefinition {
  name: string;
  expression: string;
  type: DefinitionType;
  case: CaseOption;
  normalize: boolean;
  spaces: boolean;
  maxLength?: number;
  counterStart: number;
  digits: number;
  /** normal type: recompute even when the account already has a value. */
  refresh: boolean;
}

export interface SourceOptions {
  forceAggregation: boolean;
  accountFilter: string;
}

export interface FusionConfig extends ApiUseSettings {
  proxyEnabled: boolean;
  proxyUrl: string;
  proxyPassword: string;
  /** Connector instance id the platform stores in the source's connectorAttributes: identifies our own source. */
  spConnectorInstanceId: string;
  sources: string[];
  sourceOptions: Record<string, SourceOptions>;
  includeIdentities: boolean;
  identityScopeQuery: string;
  accountFilter: string;
  attributeMerge: (typeof MERGE_STRATEGIES)[number];
  attributeMaps: AttributeMap[];
  attributeDefinitions: AttributeDefinition[];
  maxAttempts: number;
  matching: MatchingSection;
  fusionOwnerIsGlobalReviewer: boolean;
  fusionFormExpirationDays: number;
  /** 0 = no limit. */
  aggregationBatchSize: number;
  concurrencyCheckEnabled: boolean;
  reset: boolean;
  logLevel: Level;
  externalLoggingEnabled: boolean;
  externalLoggingUrl: string;
  externalLoggingLevel: Level;
}

/** The effective per-account processing batch: "Batch size" when batching is on, else one account at a time. */
export function processingBatchSize(config: FusionConfig): number {
  return config.enableBatching ? config.batchSize : 1;
}

function readSourceOptions(
  r: ConfigReader,
  raw: Record<string, unknown>,
  sources: string[],
): Record<string, SourceOptions> {
  const out: Record<string, SourceOptions> = {};
  for (const name of sources) out[name] = { forceAggregation: false, accountFilter: '' };
  const v = raw.sourceOptions;
  if (v === undefined || v === null) return out;
  if (!isRecord(v)) {
    r.problem(
      'sourceOptions',
      v,
      'an object keyed by source name: {"<source>": {"forceAggregation": bool, "accountFilter": string}}',
    );
    return out;
  }
  for (const [name, opts] of Object.entries(v)) {
    const path = `sourceOptions.${name}`;
    if (!sources.includes(name)) {
      r.problem(
        path,
        name,
        `a name listed in sources (${sources.map((s) => JSON.stringify(s)).join(', ')}); names are case-sensitive`,
      );
      continue;
    }
    if (!isRecord(opts)) {
      r.problem(path, opts, 'an object {"forceAggregation": bool, "accountFilter": string}');
      continue;
    }
    const accountFilter = r.str(opts, 'accountFilter', '', `${path}.accountFilter`);
    checkFilter(r, `${path}.accountFilter`, accountFilter);
    out[name] = {
      forceAggregation: r.bool(opts, 'forceAggregation', false, `${path}.forceAggregation`),
      accountFilter,
    };
  }
  return out;
}

function checkFilter(r: ConfigReader, field: string, text: string): void {
  if (text.trim() === '') return;
  try {
    parseAccountFilterOrThrow(text);
  } catch (e) {
    r.problem(field, text, `a filter expression such as attributes.department eq "IT" (${(e as Error).message})`);
  }
}

function readAttributeMaps(r: ConfigReader, raw: Record<string, unknown>, sources: string[]): AttributeMap[] {
  const maps: AttributeMap[] = [];
  const seen = new Set<string>();
  r.objectList(raw, 'attributeMaps').forEach((m, i) => {
    const path = `attributeMaps[${i}]`;
    const newAttribute = r.requiredStr(m, 'newAttribute', `${path}.newAttribute`);
    if (newAttribute && seen.has(newAttribute))
      r.problem(`${path}.newAttribute`, newAttribute, 'a name not already mapped');
    seen.add(newAttribute);
    const existingAttributes = r.stringList(m, 'existingAttributes', `${path}.existingAttributes`);
    const attributeMerge = r.oneOf(
      m,
      'attributeMerge',
      MAP_MERGE_STRATEGIES,
      (raw.attributeMerge as MergeStrategy | undefined) ?? 'first',
      `${path}.attributeMerge`,
    );
    let source: string | undefined;
    if (attributeMerge === 'source') {
      source = r.requiredStr(m, 'source', `${path}.source`);
      if (source && !sources.includes(source)) {
        r.problem(
          `${path}.source`,
          source,
          `a name listed in sources (${sources.map((s) => JSON.stringify(s)).join(', ')}); names are case-sensitive`,
        );
      }
    }
    maps.push({ newAttribute, existingAttributes, attributeMerge, ...(source ? { source } : {}) });
  });
  return maps;
}

function readDefinitions(r: ConfigReader, raw: Record<string, unknown>): AttributeDefinition[] {
  const defs: AttributeDefinition[] = [];
  const seen = new Set<string>();
  r.objectList(raw, 'attributeDefinitions').forEach((d, i) => {
    const path = `attributeDefinitions[${i}]`;
    const name = r.requiredStr(d, 'name', `${path}.name`);
    if (name && seen.has(name)) r.problem(`${path}.name`, name, 'a name not already defined');
    seen.add(name);
    const type = r.oneOf(d, 'type', DEFINITION_TYPES, 'normal', `${path}.type`);
    const expression =
      type === 'uuid'
        ? r.str(d, 'expression', '', `${path}.expression`)
        : r.requiredStr(d, 'expression', `${path}.expression`);
    const maxLengthRaw = d.maxLength;
    const maxLength =
      maxLengthRaw === undefined || maxLengthRaw === null || maxLengthRaw === ''
        ? undefined
        : r.int(d, 'maxLength', 0, 1, 10000, `${path}.maxLength`);
    defs.push({
      name,
      expression,
      type,
      case: r.oneOf(d, 'case', CASE_OPTIONS, 'same', `${path}.case`),
      normalize: r.bool(d, 'normalize', false, `${path}.normalize`),
      spaces: r.bool(d, 'spaces', false, `${path}.spaces`),
      ...(maxLength ? { maxLength } : {}),
      counterStart: r.int(d, 'counterStart', 1, 0, Number.MAX_SAFE_INTEGER, `${path}.counterStart`),
      digits: r.int(d, 'digits', 1, 1, 20, `${path}.digits`),
      refresh: r.bool(d, 'refresh', false, `${path}.refresh`),
    });
  });
  return defs;
}

/**
 * Parses and validates the whole connector configuration. Throws one CONFIG_INVALID error that
 * lists every invalid field with its value (secrets hidden) and what is allowed.
 */
export function parseFusionConfig(raw: Record<string, unknown>): FusionConfig {
  const r = new ConfigReader();
  const proxyEnabled = r.bool(raw, 'proxyEnabled', false);
  const sources = r.stringList(raw, 'sources', 'sources', { required: true, unique: true });
  const includeIdentities = r.bool(raw, 'includeIdentities', true);
  const identityScopeQuery = r.str(raw, 'identityScopeQuery', '*');
  if (includeIdentities && identityScopeQuery.trim() === '') {
    r.problem(
      'identityScopeQuery',
      identityScopeQuery,
      'a search query (* selects all identities) when includeIdentities is true',
    );
  }
  const accountFilter = r.str(raw, 'accountFilter', '');
  checkFilter(r, 'accountFilter', accountFilter);
  const externalLoggingEnabled = r.bool(raw, 'externalLoggingEnabled', false);
  let matching: MatchingSection = { attributes: [], reviewTopK: 10 };
  try {
    matching = parseMatchingSection(raw);
  } catch (e) {
    const details: Record<string, unknown> = isFusionError(e) ? e.details : {};
    r.problems.push({
      field: String(details.field ?? 'matching'),
      value: typeof details.value === 'string' ? details.value : showMatching(raw.matching),
      allowed: typeof details.allowed === 'string' ? details.allowed : errorMessage(e),
      code: 'MATCHING_INVALID',
    });
  }
  const config: FusionConfig = {
    ...readApiUseSettings(r, raw),
    proxyEnabled,
    proxyUrl: r.url(raw, 'proxyUrl', proxyEnabled),
    proxyPassword: r.str(raw, 'proxyPassword', ''),
    spConnectorInstanceId: r.str(raw, 'spConnectorInstanceId', ''),
    sources,
    sourceOptions: readSourceOptions(r, raw, sources),
    includeIdentities,
    identityScopeQuery,
    accountFilter,
    attributeMerge: r.oneOf(raw, 'attributeMerge', MERGE_STRATEGIES, 'first'),
    attributeMaps: readAttributeMaps(r, raw, sources),
    attributeDefinitions: readDefinitions(r, raw),
    maxAttempts: r.int(raw, 'maxAttempts', 100, 1, 100000),
    matching,
    fusionOwnerIsGlobalReviewer: r.bool(raw, 'fusionOwnerIsGlobalReviewer', false),
    fusionFormExpirationDays: r.int(raw, 'fusionFormExpirationDays', 7, 1, 365),
    aggregationBatchSize: r.int(raw, 'aggregationBatchSize', 0, 0, 10_000_000),
    concurrencyCheckEnabled: r.bool(raw, 'concurrencyCheckEnabled', true),
    reset: r.bool(raw, 'reset', false),
    logLevel: r.oneOf(raw, 'logLevel', LEVELS, 'info', 'logLevel', true),
    externalLoggingEnabled,
    externalLoggingUrl: r.url(raw, 'externalLoggingUrl', externalLoggingEnabled),
    externalLoggingLevel: r.oneOf(raw, 'externalLoggingLevel', LEVELS, 'info', 'externalLoggingLevel', true),
  };
  if (proxyEnabled && config.proxyPassword === '') {
    r.problem('proxyPassword', undefined, 'the shared proxy secret (required when proxyEnabled is true)');
  }
  r.assertValid();
  return config;
}

function showMatching(v: unknown): string {
  try {
    const s = JSON.stringify(v) ?? 'undefined';
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(v);
  }
}
