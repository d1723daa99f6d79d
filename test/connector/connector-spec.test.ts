import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CASE_OPTIONS,
  DEFINITION_TYPES,
  LEVELS,
  MAP_MERGE_STRATEGIES,
  MERGE_STRATEGIES,
  parseFusionConfig,
  type FusionConfig,
} from '../../src/core/config/fusion-config';
import { INTERNAL_ATTRIBUTES, KEY_ATTRIBUTE, NAME_ATTRIBUTE } from '../../src/core/aggregation/connector-account';
import { ALGORITHMS, ATTRIBUTE_KINDS, MATCHING_MODELS } from '../../src/core/matching/types';
import { FORM_ONLY_KEYS, fromPlatformForm } from '../../src/connector/platform-form';

interface SpecItem {
  key?: string;
  type: string;
  options?: Array<{ label: string; value: string }>;
  items?: SpecItem[];
  subMenus?: Array<{ label: string; items: SpecItem[] }>;
}

interface Spec {
  sourceConfig: SpecItem[];
  sourceConfigInitialValues: Record<string, unknown>;
  accountSchema: {
    identityAttribute: string;
    displayAttribute: string;
    attributes: Array<{ name: string; multi?: boolean }>;
  };
  entitlementSchemas: Array<{ type: string; identityAttribute: string; attributes: Array<{ name: string }> }>;
}

const spec = JSON.parse(readFileSync(path.join(__dirname, '../../connector-spec.json'), 'utf8')) as Spec;

/** The fields of the form (menus -> sections -> items), without descending into card lists. */
function topItems(items: SpecItem[]): SpecItem[] {
  return items.flatMap((i) => (i.key ? [i] : topItems(i.items ?? [])));
}
const fields = topItems(spec.sourceConfig);
const field = (key: string): SpecItem => {
  const f = fields.find((i) => i.key === key);
  if (!f) throw new Error(`connector-spec.json has no field ${key}`);
  return f;
};
const cardKeys = (key: string): string[] =>
  (field(key).subMenus ?? []).flatMap((m) => m.items.map((i) => i.key!)).sort();
const optionValues = (item: SpecItem): string[] => (item.options ?? []).map((o) => o.value);
const cardItem = (card: string, key: string): SpecItem =>
  (field(card).subMenus ?? []).flatMap((m) => m.items).find((i) => i.key === key)!;

/** Wraps an object so every property the parser reads is recorded. */
function recording<T extends object>(target: T, reads: Set<string>): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      if (typeof prop === 'string') reads.add(prop);
      return Reflect.get(obj, prop, receiver) as unknown;
    },
  });
}

/** Runs the real parser on a valid configuration and returns the keys it read at each level. */
function keysTheParserReads(): {
  top: string[];
  map: string[];
  definition: string[];
  sourceOptions: string[];
  matching: string[];
  rule: string[];
} {
  const r = {
    top: new Set<string>(),
    map: new Set<string>(),
    definition: new Set<string>(),
    sourceOptions: new Set<string>(),
    matching: new Set<string>(),
    rule: new Set<string>(),
  };
  const raw = {
    baseurl: 'https://tenant.api.example.com',
    clientId: 'cid',
    clientSecret: 'secret',
    sources: ['HR'],
    sourceOptions: { HR: recording({}, r.sourceOptions) },
    // attributeMerge "source" so the parser also reads `source`.
    attributeMaps: [
      recording(
        { newAttribute: 'dept', existingAttributes: ['department'], attributeMerge: 'source', source: 'HR' },
        r.map,
      ),
    ],
    attributeDefinitions: [recording({ name: 'uid', expression: '$firstname', maxLength: 8 }, r.definition)],
    matching: recording(
      { attributes: [recording({ attribute: 'email', algorithm: 'exact', threshold: 90 }, r.rule)], reviewTopK: 5 },
      r.matching,
    ),
  };
  parseFusionConfig(recording(raw, r.top));
  const sorted = (s: Set<string>): string[] => [...s].sort();
  return {
    top: sorted(r.top),
    map: sorted(r.map),
    definition: sorted(r.definition),
    sourceOptions: sorted(r.sourceOptions),
    matching: sorted(r.matching),
    rule: sorted(r.rule),
  };
}

/** Set by the platform itself, never by the operator: not a field of the form. */
const PLATFORM_SET_KEYS = ['spConnectorInstanceId'];
/** Scalar form fields that land inside `matching` (platform-form.ts). */
const MATCHING_FORM_KEYS: Record<
  string,
  'reviewTopK' | 'model' | 'probabilityThreshold' | 'maxReviewShare' | undefined
> = {
  matchingReviewTopK: 'reviewTopK',
  matchingModel: 'model',
  matchingProbabilityThreshold: 'probabilityThreshold',
  matchingMaxReviewShare: 'maxReviewShare',
};

describe('connector-spec.json declares exactly the configuration the core reads', () => {
  const reads = keysTheParserReads();

  it('the parser read something at every level (the recording works)', () => {
    expect(reads.top).toEqual(
      expect.arrayContaining(['baseurl', 'sources', 'attributeMaps', 'matching', 'proxyPassword']),
    );
    expect(reads.map.length).toBeGreaterThan(0);
    expect(reads.rule.length).toBeGreaterThan(0);
  });

  it('every top-level key the parser reads is a field of the form, and every field is read (after the form mapping)', () => {
    const formKeys = fields.map((f) => f.key!);
    expect(new Set(formKeys).size).toBe(formKeys.length);
    const asSentToTheCore = Object.keys(
      fromPlatformForm(
        Object.fromEntries(formKeys.map((k) => [k, k === 'matchingAttributes' || k === 'sourceOptions' ? [] : 'x'])),
      ),
    );
    expect(asSentToTheCore.sort()).toEqual(reads.top.filter((k) => !PLATFORM_SET_KEYS.includes(k)));
    for (const k of FORM_ONLY_KEYS) expect(formKeys).toContain(k);
  });

  it('card lists declare exactly the keys the parser reads in each entry', () => {
    expect(cardKeys('attributeMaps')).toEqual(reads.map);
    expect(cardKeys('attributeDefinitions')).toEqual(reads.definition);
    expect(cardKeys('sourceOptions')).toEqual(['source', ...reads.sourceOptions].sort());
    expect(cardKeys('matchingAttributes')).toEqual(reads.rule);
    expect(reads.matching).toEqual(['attributes', 'maxReviewShare', 'model', 'probabilityThreshold', 'reviewTopK']);
  });

  it('select options are the values the parser accepts', () => {
    expect(optionValues(field('attributeMerge'))).toEqual([...MERGE_STRATEGIES]);
    expect(optionValues(cardItem('attributeMaps', 'attributeMerge'))).toEqual([...MAP_MERGE_STRATEGIES]);
    expect(optionValues(cardItem('attributeDefinitions', 'type'))).toEqual([...DEFINITION_TYPES]);
    expect(optionValues(cardItem('attributeDefinitions', 'case'))).toEqual([...CASE_OPTIONS]);
    expect(optionValues(cardItem('matchingAttributes', 'algorithm'))).toEqual([...ALGORITHMS]);
    expect(optionValues(field('matchingModel'))).toEqual([...MATCHING_MODELS]);
    expect(optionValues(cardItem('matchingAttributes', 'kind'))).toEqual([...ATTRIBUTE_KINDS]);
    expect(optionValues(field('logLevel'))).toEqual([...LEVELS]);
    expect(optionValues(field('externalLoggingLevel'))).toEqual([...LEVELS]);
  });

  it('sourceConfigInitialValues are the parser defaults, and every optional scalar field has one', () => {
    const initial = spec.sourceConfigInitialValues;
    for (const k of Object.keys(initial)) expect(fields.map((f) => f.key)).toContain(k);
    const parsed = parseFusionConfig(
      fromPlatformForm({ ...initial, baseurl: 'https://t.example', clientId: 'c', clientSecret: 's', sources: ['HR'] }),
    );
    for (const [k, v] of Object.entries(initial)) {
      const matchingKey = MATCHING_FORM_KEYS[k];
      const actual = matchingKey ? parsed.matching[matchingKey] : parsed[k as keyof FusionConfig];
      expect({ [k]: actual }).toEqual({ [k]: v });
    }
    const defaults = parseFusionConfig({
      baseurl: 'https://t.example',
      clientId: 'c',
      clientSecret: 's',
      sources: ['HR'],
    });
    for (const f of fields.filter((i) => ['toggle', 'number', 'select'].includes(i.type))) {
      expect(initial).toHaveProperty(f.key!);
      if (!MATCHING_FORM_KEYS[f.key!])
        expect({ [f.key!]: initial[f.key!] }).toEqual({ [f.key!]: defaults[f.key as keyof FusionConfig] });
    }
  });

  it('the account schema has the attributes the connector maintains; entitlements are of type group', () => {
    expect(spec.accountSchema.identityAttribute).toBe(KEY_ATTRIBUTE);
    expect(spec.accountSchema.displayAttribute).toBe(NAME_ATTRIBUTE);
    expect(spec.accountSchema.attributes.map((a) => a.name).sort()).toEqual([...INTERNAL_ATTRIBUTES].sort());
    expect(
      spec.accountSchema.attributes
        .filter((a) => a.multi)
        .map((a) => a.name)
        .sort(),
    ).toEqual(['accounts', 'sources']);
    expect(spec.entitlementSchemas.map((e) => e.type)).toEqual(['group']);
    expect(spec.entitlementSchemas[0]!.attributes.map((a) => a.name)).toEqual(['id', 'name', 'attribute']);
  });
});

describe('fromPlatformForm', () => {
  it('maps the matching model and probability threshold (form numbers may arrive as text)', () => {
    const core = fromPlatformForm({
      matchingAttributes: [{ attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: false }],
      matchingModel: 'probabilistic',
      matchingProbabilityThreshold: '0.95',
    });
    expect(core).toEqual({
      matching: {
        attributes: [{ attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: false }],
        model: 'probabilistic',
        probabilityThreshold: 0.95,
      },
    });
    const blankKind = fromPlatformForm({
      matchingAttributes: [{ attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: false, kind: null }],
    });
    expect(blankKind.matching).toEqual({
      attributes: [{ attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: false }],
    });
    const tooHigh = {
      ...fromPlatformForm({ matchingModel: 'probabilistic', matchingProbabilityThreshold: '1.5' }),
      baseurl: 'https://t.example',
      clientId: 'c',
      clientSecret: 's',
      sources: ['HR'],
    };
    expect(() => parseFusionConfig(tooHigh)).toThrow(/matching\.probabilityThreshold/);
  });

  it('turns the form shapes into the core shapes, which the core accepts', () => {
    const form = {
      baseurl: 'https://t.example',
      clientId: 'c',
      clientSecret: 's',
      sources: ['HR', 'AD'],
      sourceOptions: [{ source: 'AD', forceAggregation: true, accountFilter: 'name sw "a"' }],
      matchingAttributes: [{ attribute: 'email', algorithm: 'exact', threshold: '95', mandatory: true }],
      matchingReviewTopK: '3',
    };
    const core = fromPlatformForm(form);
    expect(core).not.toHaveProperty('matchingAttributes');
    expect(core).not.toHaveProperty('matchingReviewTopK');
    const parsed = parseFusionConfig(core);
    expect(parsed.sourceOptions.AD).toEqual({ forceAggregation: true, accountFilter: 'name sw "a"' });
    expect(parsed.sourceOptions.HR).toEqual({ forceAggregation: false, accountFilter: '' });
    expect(parsed.matching).toEqual({
      attributes: [{ attribute: 'email', algorithm: 'exact', threshold: 95, mandatory: true }],
      reviewTopK: 3,
      model: 'rules',
      probabilityThreshold: 0.9,
      maxReviewShare: 0.5,
    });
  });

  it('leaves a configuration already in the core shape unchanged', () => {
    const core = { sources: ['HR'], sourceOptions: { HR: { forceAggregation: true } }, matching: { attributes: [] } };
    expect(fromPlatformForm(core)).toEqual(core);
  });

  it('passes malformed cards on whole, so the core names the problem', () => {
    const bad = [{ forceAggregation: true }];
    expect(fromPlatformForm({ sourceOptions: bad }).sourceOptions).toBe(bad);
    expect(() =>
      parseFusionConfig(
        fromPlatformForm({
          baseurl: 'https://t.example',
          clientId: 'c',
          clientSecret: 's',
          sources: ['HR'],
          sourceOptions: bad,
        }),
      ),
    ).toThrow(/sourceOptions/);
  });
});
