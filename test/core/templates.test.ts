import { compileTemplate, TemplateError } from '../../src/core/templates/velocity-template';
import { postProcess, normalizeText } from '../../src/core/templates/post-process';

const ctx = { first: 'John', last: 'Doe', n: null, list: ['a', 'b'], user: { name: 'Jane' }, dept: 'IT' };

function kindOf(expression: string): string {
  try {
    compileTemplate(expression).render(ctx);
  } catch (e) {
    if (e instanceof TemplateError) return `${e.kind}: ${e.message}`;
    throw e;
  }
  return 'ok';
}

describe('strict Velocity templates', () => {
  test.each([
    ['$first.substring(0,1)$last', 'JDoe'],
    ['$first.toLowerCase().$last.toLowerCase()', 'john.doe'],
    ['#if($n)yes#{else}no#end #if(!$missing)none#end', 'no none'],
    ['[$!missing][$!n]', '[][]'],
    ['#set($x = $first + "." + $last)$x', 'John.Doe'],
    ['${user.name}', 'Jane'],
    ['$last.length() $first.equals("John") $first.equalsIgnoreCase("JOHN") $first.contains("oh")', '3 true true true'],
    ['$list.size() $list.get(1) $list[0]', '2 b a'],
    ['#if($first.length() > 10)$first.substring(0,10)#{else}$first#end', 'John'],
  ])('%s renders %s', (expression, expected) => {
    expect(compileTemplate(expression).render(ctx)).toBe(expected);
  });

  test('a missing reference is an error, never printed literally', () => {
    expect(kindOf('J$lastName')).toMatch(/^null-reference: \$lastName is missing/);
    expect(kindOf('$user.nope')).toMatch(/^null-reference: \$user.nope is missing/);
  });

  test('a null value is an error, never printed as "null"', () => {
    expect(kindOf('A$n')).toMatch(/^null-reference: \$n is null/);
  });

  test('syntax error', () => {
    expect(kindOf('#foreach($i in) #end')).toMatch(/^syntax: Parse error on line 1/);
  });

  test('method not found names the method and suggests substring for substr', () => {
    expect(kindOf('$first.substr(0,1)')).toMatch(
      /^method-not-found: method substr\(\) does not exist on a string in \$first.substr\(\); use substring\(begin, end\) instead/,
    );
    expect(kindOf('$first.frobnicate()')).toMatch(/^method-not-found: method frobnicate\(\)/);
  });

  test('index out of bounds', () => {
    expect(kindOf('$first.substring(0,10)')).toMatch(/^index-out-of-bounds: substring\(0, 10\) on "John" of length 4/);
    expect(kindOf('$list[5]')).toMatch(/^index-out-of-bounds: index 5 is outside a value of length 2/);
    expect(kindOf('$list.get(2)')).toMatch(/^index-out-of-bounds/);
    expect(kindOf('$first.charAt(4)')).toMatch(/^index-out-of-bounds/);
  });

  test('#set does not leak into the caller context or the next render', () => {
    const t = compileTemplate('#set($x = "set")$x');
    const context: Record<string, unknown> = { a: 1 };
    expect(t.render(context)).toBe('set');
    expect(context).toEqual({ a: 1 });
    expect(compileTemplate('$!x').render(context)).toBe('');
  });

  test('usesCounter', () => {
    expect(compileTemplate('$first$counter').usesCounter).toBe(true);
    expect(compileTemplate('$first${counter}').usesCounter).toBe(true);
    expect(compileTemplate('$first').usesCounter).toBe(false);
  });
});

describe('post-processing', () => {
  test('case, spaces, normalise, maxLength in that order', () => {
    expect(postProcess("zoë o'brien", { case: 'capitalize', spaces: true, normalize: true, maxLength: 7 })).toBe(
      'ZoeObri',
    );
    expect(postProcess('Ann Lee', { case: 'upper', spaces: false, normalize: false })).toBe('ANN LEE');
    expect(postProcess('Ann Lee', { case: 'lower', spaces: true, normalize: false })).toBe('annlee');
    expect(normalizeText('Łukasz Øster Straße')).toBe('Lukasz Oster Strasse');
  });
});
