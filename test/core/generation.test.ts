import { parseFusionConfig, type FusionConfig } from '../../src/core/config/fusion-config';
import { AttributeGenerator } from '../../src/core/aggregation/attribute-generator';
import { CounterStore } from '../../src/core/aggregation/counter-store';
import { UniqueRegistry } from '../../src/core/aggregation/unique-registry';
import { mergeAttributes, sortBySourceOrder } from '../../src/core/aggregation/attribute-merge';
import { type FusionError } from '../../src/core/errors';

function config(extra: Record<string, unknown>): FusionConfig {
  return parseFusionConfig({
    baseurl: 'https://t.example.com',
    clientId: 'c',
    clientSecret: 's',
    sources: ['HR', 'AD', 'LMS'],
    ...extra,
  });
}

function generator(c: FusionConfig, counters: Record<string, number> = {}, persisted: Record<string, number>[] = []) {
  const registry = new UniqueRegistry(AttributeGenerator.registeredNames(c.attributeDefinitions));
  const store = new CounterStore(counters, async (v) => {
    persisted.push(v);
  });
  return { gen: new AttributeGenerator(c, registry, store), registry, store };
}

const subject = (context: Record<string, unknown>, existing: Record<string, unknown> = {}) => ({
  label: `"${String(context.first)}"`,
  context,
  existing,
});

describe('unique generation', () => {
  const c = config({
    attributeDefinitions: [
      { name: 'uid', expression: '$first.substring(0,1)$last', type: 'unique', case: 'lower', maxLength: 6 },
      { name: 'mail', expression: '${uid}@example.com', type: 'normal' },
    ],
  });

  test('retries with a counter appended after truncation; later definitions see earlier values', () => {
    const { gen } = generator(c);
    const values = [1, 2, 3].map(() => gen.generate(subject({ first: 'John', last: 'Donaldson' })));
    expect(values.map((v) => v.uid)).toEqual(['jdonal', 'jdona1', 'jdona2']);
    expect(values[2]?.mail).toBe('jdona2@example.com');
  });

  test('values already held by accounts are never re-issued', () => {
    const { gen, registry } = generator(c);
    registry.register('uid', 'jdoe');
    registry.register('uid', 'jdoe1');
    expect(gen.generate(subject({ first: 'John', last: 'Doe' })).uid).toBe('jdoe2');
  });

  test('resuming a collision chain gives the same values as searching from 1', () => {
    const { gen, registry } = generator(c);
    registry.register('uid', 'jdoe');
    registry.register('uid', 'jdoe2');
    const uids = [1, 2, 3].map(() => gen.generate(subject({ first: 'John', last: 'Doe' })).uid);
    expect(uids).toEqual(['jdoe1', 'jdoe3', 'jdoe4']);
  });

  test('existing values are kept', () => {
    const { gen } = generator(c);
    expect(gen.generate(subject({ first: 'John', last: 'Doe' }, { uid: 'legacy' })).uid).toBe('legacy');
  });

  test('an expression that always yields the same value retries up to maxAttempts, then names attribute, expression and last value', () => {
    const fixed = config({
      maxAttempts: 5,
      attributeDefinitions: [{ name: 'uid', expression: '#if($counter)x#{else}x#end', type: 'unique', digits: 3 }],
    });
    const { gen } = generator(fixed);
    gen.generate(subject({ first: 'a' }));
    let err: FusionError | undefined;
    try {
      gen.generate(subject({ first: 'b' }));
    } catch (e) {
      err = e as FusionError;
    }
    expect(err?.code).toBe('UNIQUE_EXHAUSTED');
    expect(err?.message).toMatch(
      /"uid".*after 5 attempts of expression "#if\(\$counter\)x#\{else\}x#end"; last value tried "x"/,
    );
  });

  test('a Velocity error names the attribute, the expression, the account and the kind', () => {
    const bad = config({
      attributeDefinitions: [{ name: 'uid', expression: '$first.substr(0,1)$lastName', type: 'unique' }],
    });
    const { gen } = generator(bad);
    expect(() => gen.generate(subject({ first: 'Ann' }))).toThrow(
      /Attribute definition "uid" failed for account "Ann": method-not-found error in expression "\$first.substr\(0,1\)\$lastName": .*use substring/,
    );
    const nullRef = config({ attributeDefinitions: [{ name: 'uid', expression: '$first$lastName', type: 'normal' }] });
    expect(() => generator(nullRef).gen.generate(subject({ first: 'Ann' }))).toThrow(
      /null-reference error .*\$lastName is missing/,
    );
  });

  test('a syntax error fails when the run compiles its templates', () => {
    const bad = config({ attributeDefinitions: [{ name: 'uid', expression: '#foreach($i in) #end' }] });
    expect(() => generator(bad)).toThrow(/Attribute definition "uid": syntax error in expression/);
  });
});

describe('counters and uuids', () => {
  test('counter continues from the persisted state, padded, and skips taken values', async () => {
    const c = config({
      attributeDefinitions: [{ name: 'empNo', expression: 'E$counter', type: 'counter', digits: 4, counterStart: 1 }],
    });
    const persisted: Record<string, number>[] = [];
    const { gen, registry, store } = generator(c, { empNo: 7 }, persisted);
    registry.register('empNo', 'E0009');
    expect([1, 2].map(() => gen.generate(subject({ first: 'x' })).empNo)).toEqual(['E0008', 'E0010']);
    await store.flush();
    expect(persisted).toEqual([{ empNo: 10 }]);
    await store.flush();
    expect(persisted).toHaveLength(1);
  });

  test('counterStart applies to a fresh counter', () => {
    const c = config({
      attributeDefinitions: [{ name: 'n', expression: '$counter', type: 'counter', counterStart: 1000 }],
    });
    expect(generator(c).gen.generate(subject({})).n).toBe('1000');
  });

  test('uuid', () => {
    const c = config({ attributeDefinitions: [{ name: 'id', type: 'uuid', case: 'upper' }] });
    expect(generator(c).gen.generate(subject({})).id).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-4/);
  });

  test('normal definitions are kept unless refresh is on', () => {
    const keep = config({ attributeDefinitions: [{ name: 'dn', expression: '$first' }] });
    expect(generator(keep).gen.generate(subject({ first: 'New' }, { dn: 'Old' })).dn).toBe('Old');
    const refresh = config({ attributeDefinitions: [{ name: 'dn', expression: '$first', refresh: true }] });
    expect(generator(refresh).gen.generate(subject({ first: 'New' }, { dn: 'Old' })).dn).toBe('New');
  });

  test('keepExisting keeps refresh values (no source data to recompute them) and renders only missing ones', () => {
    const c = config({
      attributeDefinitions: [
        { name: 'dn', expression: '$sources.HR.get(0).first', refresh: true },
        { name: 'label', expression: '$first' },
      ],
    });
    const out = generator(c).gen.generate({
      ...subject({ first: 'Ada', sources: ['HR'] }, { dn: 'Old' }),
      keepExisting: true,
    });
    expect(out).toEqual({ dn: 'Old', label: 'Ada' });
  });
});

describe('merge strategies', () => {
  const accounts = sortBySourceOrder(
    ['HR', 'AD', 'LMS'],
    [
      { sourceName: 'LMS', attributes: { email: 'l@x', groups: ['g3'], Dept: 'lms' } },
      { sourceName: 'AD', attributes: { mail: 'a@x', groups: ['g1', 'g2'], dept: 'ad' } },
      { sourceName: 'HR', attributes: { email: '', dept: 'hr', title: 'Eng' } },
    ],
  );

  test('first found in source order; case-sensitive names; list; concatenate; source preference', () => {
    const c = config({
      attributeMaps: [
        { newAttribute: 'email', existingAttributes: ['mail', 'email'] },
        { newAttribute: 'allGroups', existingAttributes: ['groups'], attributeMerge: 'list' },
        { newAttribute: 'depts', existingAttributes: ['dept'], attributeMerge: 'concatenate' },
        { newAttribute: 'adDept', existingAttributes: ['dept'], attributeMerge: 'source', source: 'AD' },
      ],
    });
    const merged = mergeAttributes(c, accounts);
    expect(merged.email).toBe('a@x');
    expect(merged.allGroups).toEqual(['g1', 'g2', 'g3']);
    expect(merged.depts).toBe('[hr] [ad]');
    expect(merged.adDept).toBe('ad');
    expect(merged.title).toBe('Eng');
    expect(merged.dept).toBe('hr');
    expect(merged.Dept).toBe('lms');
  });

  test('global list default makes every attribute a list', () => {
    const merged = mergeAttributes(config({ attributeMerge: 'list' }), accounts);
    expect(merged.dept).toEqual(['hr', 'ad']);
  });
});
