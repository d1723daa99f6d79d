/**
 * Differential test of the compiled fast path (src/core/templates/fast-template.ts) against
 * velocityjs (StrictCompile): every template below is rendered over many random contexts both
 * ways, with and without $counter, and the values or the errors (kind and message) must be equal.
 */
import { parse } from 'velocityjs';
import { BAIL, compileFast } from '../../src/core/templates/fast-template';
import { compileTemplate, TemplateError, type CompiledTemplate } from '../../src/core/templates/velocity-template';
import { normalizeText } from '../../src/core/templates/post-process';
import { seededRandom } from '../../src/core/matching/probabilistic/estimate';

/** Templates the fast path compiles: the docs' and tests' examples, the bench's, and edge cases. */
const FAST = [
  '$firstName.substring(0,1)$lastName',
  '$firstName.toLowerCase().$lastName.toLowerCase()',
  '#if($department == "IT")$firstName.substring(0,1).toLowerCase()$lastName.toLowerCase()#{else}$firstName.toLowerCase().$lastName.toLowerCase()#end',
  '#if($jobTitle)$jobTitle#{else}Member of $department#end',
  'F$counter',
  'E$!counter',
  '$firstName$counter',
  '#if($counter)x#{else}y#end$counter',
  '${uid}@example.com',
  '$firstName.$nickname@x.com',
  '$firstName $lastName',
  '$!firstName$!{lastName}$!middle',
  '${firstName}_${lastName.toUpperCase()}',
  '$user.name.toLowerCase()',
  '$!user.name $!user.nope $!user.address.city',
  '$user.address.city',
  '$firstName.length() $lastName.isEmpty() $firstName.equals("Zoë") $firstName.equalsIgnoreCase("JOSÉ") $lastName.contains("\'")',
  '$firstName.charAt(0)$lastName.charAt(2)',
  '$lastName.substring(1)',
  '$lastName.substring(0, $n)',
  '#if($lastName.length() > 4)$lastName.substring(0,4)#{else}$lastName#end',
  '#if($lastName.length() >= 3 && !$middle)$lastName.substring(0,3)#elseif($middle)$middle.charAt(0)#{else}short#end',
  '#if($middle == "")empty#elseif($middle)has#{else}none#end',
  '#if($n == 3)three#elseif($n != 0 || $flag)other#end',
  '#if($n > 1 && $n <= 5)mid#end#if(!($n < 0))nonneg#end',
  '#if($flag == true)T#elseif($flag == false)F#{else}N#end',
  '#if($department != "Sales")$department.trim()#end',
  '#set($x = $firstName.toLowerCase())$x.$lastName.toLowerCase()',
  '#set($i = $firstName.substring(0,1))#set($x = $i)${x}x',
  '#set($n = $n + 1)$n',
  '#set($counter = "c")$counter',
  '#set($y = $middle)$!y',
  '$n $flag $score',
  '$firstName.replace("é", "e").concat("-").concat($lastName)',
  '$lastName.indexOf("a") $lastName.startsWith("O") $lastName.endsWith("n")',
  '$lastName.trim().toUpperCase().toLowerCase()',
  '#* a comment *#$firstName## line comment',
  '#[[raw $text]]#$firstName',
  'plain text only',
  '',
  '$lastName.length',
  '$firstName.toLowerCase.name',
  '$list',
  '$user',
  '$n.toLowerCase()',
  '$list.toLowerCase()',
  '$firstName.substring($n)',
  '$firstName.substring("1")',
  '#if($n - 1 == 2)$n#end#if($n * 2 > 4)big#end#if($n / 2 == 1.5)half#end#if($n % 2 == 1)odd#end',
  '#if($score > 1.5)big#end',
];

/** Compiled, but every value is one the closures decline (a method printed as a property). */
const DECLINED = ['$firstName.toLowerCase'];

/** Templates outside the subset: velocityjs renders them, whatever the context. */
const SLOW = [
  '$list.get(0)',
  '$list.size()',
  '$list[0]',
  '$sources.HR.get(0).first',
  '#foreach($i in $list)$i#end',
  '#set($x = "$firstName.$lastName")$x',
  '$firstName.substring(1.5)',
  '$firstName.substr(0,1)',
  '$firstName.slice(1)',
  '$firstName.frobnicate()',
  '$firstName.getBytes()',
  '$toString',
  '$user.constructor',
  '#set($user.name = "x")$user.name',
  '#macro(m)x#end#m()',
  '$firstName.split(" ")',
];

const STRINGS = [
  'Zoë',
  'José',
  "O'Brien",
  'Łukasz',
  'Straße',
  'Ødegård',
  'van der Berg',
  '  padded  ',
  '',
  ' ',
  'A',
  'IT',
  'Sales',
  'Nguyễn',
  '李',
  '😀x',
  '3',
  'null',
  '$firstName',
  '#if',
];
const OTHERS: unknown[] = [null, undefined, 0, 3, -1, 1.5, true, false, ['a', 'b'], { name: 'Ann' }];

function randomContext(rand: () => number): Record<string, unknown> {
  const any = (): unknown =>
    rand() < 0.75 ? STRINGS[Math.floor(rand() * STRINGS.length)] : OTHERS[Math.floor(rand() * OTHERS.length)];
  const ctx: Record<string, unknown> = {};
  for (const key of ['firstName', 'lastName', 'middle', 'department', 'jobTitle', 'nickname', 'uid', 'text']) {
    if (rand() < 0.9) ctx[key] = any();
  }
  if (rand() < 0.8) ctx.n = [0, 1, 2, 3, 4, 6, -2, '3', '', null][Math.floor(rand() * 10)];
  if (rand() < 0.7) ctx.flag = [true, false, 'true', 0, 1, null][Math.floor(rand() * 6)];
  if (rand() < 0.5) ctx.score = 0.1 + Math.floor(rand() * 100) / 10;
  if (rand() < 0.7) ctx.list = rand() < 0.8 ? ['x', 'y'] : 'notalist';
  if (rand() < 0.7) {
    ctx.user = rand() < 0.8 ? { name: any(), address: rand() < 0.5 ? { city: any() } : null } : any();
  }
  if (rand() < 0.3) ctx.counter = any();
  if (rand() < 0.2) ctx.sources = { HR: [{ first: any() }] };
  // velocityjs reads a key that is a reference's whole text before the reference itself.
  if (rand() < 0.03) ctx.$firstName = any();
  return ctx;
}

type Outcome = { value: string } | { error: string };

function outcome(t: CompiledTemplate, ctx: Record<string, unknown>, counter: string | undefined): Outcome {
  try {
    return { value: t.render(ctx, counter) };
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    return { error: `${e.kind}: ${e.message}` };
  }
}

const COUNTERS = [undefined, '', '1', '007', 'x'];
const CONTEXTS = 1500;

const same = (a: Outcome, b: Outcome): boolean =>
  'value' in a ? 'value' in b && a.value === b.value : 'error' in b && a.error === b.error;

/** Renders `expression` over CONTEXTS random contexts both ways; returns how many the closures rendered alone. */
function differential(expression: string): number {
  const fast = compileTemplate(expression);
  const reference = compileTemplate(expression, { fastPath: false });
  expect(fast.fastPath).toBe(true);
  expect(reference.fastPath).toBe(false);
  const raw = compileFast(parse(expression))!;
  const rand = seededRandom(expression.length * 7919 + 1);
  let rendered = 0;
  for (let i = 0; i < CONTEXTS; i++) {
    const ctx = randomContext(rand);
    const before = JSON.stringify(ctx);
    const counter = COUNTERS[i % COUNTERS.length];
    const want = outcome(reference, ctx, counter);
    const got = outcome(fast, ctx, counter);
    if (!same(got, want))
      expect({ expression, ctx, counter, outcome: got }).toEqual({ expression, ctx, counter, outcome: want });
    // The closures alone: when they return a value, velocityjs returned the same value.
    let alone: Outcome | undefined;
    try {
      alone = { value: raw(ctx, counter) };
    } catch (e) {
      if (e !== BAIL && !(e instanceof Error)) throw e;
    }
    if (alone) {
      rendered++;
      if (!same(alone, want))
        expect({ expression, ctx, counter, outcome: alone }).toEqual({ expression, ctx, counter, outcome: want });
    }
    // Asserted only on a difference: an expect() per context cost more than both renders together.
    const after = JSON.stringify(ctx);
    if (after !== before) expect(after).toBe(before);
  }
  return rendered;
}

describe('fast template path equals velocityjs', () => {
  test.each(FAST)('%s compiles to the fast path and renders as velocityjs does', (expression) => {
    // The closures did the work for a share of the contexts, not only velocityjs behind them.
    expect(differential(expression)).toBeGreaterThan(CONTEXTS / 20);
  });

  test.each(DECLINED)('%s compiles, and velocityjs renders every value', (expression) => {
    expect(differential(expression)).toBe(0);
  });

  test.each(SLOW)('%s stays on velocityjs', (expression) => {
    expect(compileTemplate(expression).fastPath).toBe(false);
  });

  test('a value that is not a plain own property falls back to velocityjs', () => {
    const proto = { firstName: 'Inherited' };
    const ctx = Object.create(proto) as Record<string, unknown>;
    ctx.lastName = 'Own';
    const t = compileTemplate('$!firstName$lastName');
    expect(t.render(ctx)).toBe(compileTemplate('$!firstName$lastName', { fastPath: false }).render(ctx));
    expect(t.render(ctx)).toBe('Own');
  });
});

describe('normalizeText', () => {
  // The five passes without the shortcut for printable ASCII.
  const longWay = (s: string): string =>
    s
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/ß/g, 'ss')
      .replace(/[Øø]/g, (c) => (c === 'Ø' ? 'O' : 'o'))
      .replace(/[Łł]/g, (c) => (c === 'Ł' ? 'L' : 'l'))
      .replace(/['’`´]/g, '');

  test('equals the five passes for every character up to U+2FFF', () => {
    for (let c = 0; c < 0x3000; c++) {
      const s = `a${String.fromCharCode(c)}b`;
      if (normalizeText(s) !== longWay(s)) expect([c, normalizeText(s)]).toEqual([c, longWay(s)]);
    }
    expect(normalizeText("Zoë O'Brien `x´")).toBe('Zoe OBrien x');
  });
});
