/**
 * Strict Velocity templates on velocityjs. The engine prints a missing reference literally
 * (`J$lastName`) and a null one as "null"; an identity connector must never mint such a value,
 * so rendering a missing or null reference is an error here. Quiet references (`$!x`) render
 * empty and conditions (`#if($x)`) may test for null, as in Java Velocity.
 *
 * Parse and compile happen once per expression (about 30x faster than render() per call);
 * each render gets a fresh shallow copy of the context because `#set` mutates it. A template in
 * the subset fast-template.ts compiles renders through its closures instead, and through
 * velocityjs only for the values the closures decline (errors, unusual value types).
 */
import { Compile, parse } from 'velocityjs';
import { compileFast } from './fast-template';
import { JAVA_STRING_METHODS, METHOD_HINTS, TemplateIndexError } from './velocity-methods';

export type TemplateErrorKind = 'null-reference' | 'syntax' | 'method-not-found' | 'index-out-of-bounds' | 'runtime';

export class TemplateError extends Error {
  constructor(
    readonly kind: TemplateErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

interface RefAst {
  id: string;
  leader: string;
  args?: unknown[];
  path?: { type: string; id: unknown }[];
  pos?: { first_line: number; first_column: number };
}

type Internals = {
  getReferences(this: unknown, ast: RefAst, isVal?: boolean): unknown;
  getPropIndex(this: unknown, property: { id: { type: string; value?: unknown } }, baseRef: unknown): unknown;
  getPropMethod(this: unknown, property: { id: string }, baseRef: unknown, ast: RefAst): unknown;
};
const base = Compile.prototype as unknown as Internals;

function refText(ast: RefAst): string {
  let text = `${ast.leader}${ast.id}`;
  for (const p of ast.path ?? []) {
    if (p.type === 'property') text += `.${String(p.id)}`;
    else if (p.type === 'method') text += `.${String(p.id)}()`;
    else text += '[...]';
  }
  return text;
}

class StrictCompile extends Compile {
  protected override getReferences(node: unknown, isVal?: boolean): string {
    const ast = node as RefAst;
    const value = base.getReferences.call(this, ast, false);
    if (!isVal) return value as string;
    if (value === undefined || value === null) {
      if (ast.leader === '$!') return '';
      const where = ast.pos ? ` at line ${ast.pos.first_line}, column ${ast.pos.first_column + 1}` : '';
      throw new TemplateError(
        'null-reference',
        `${refText(ast)} is ${value === null ? 'null' : 'missing'}${where} (guard it with #if(${refText(ast).replace('$!', '$')}) or use $!{...})`,
      );
    }
    // velocityjs formats non-string values itself; the declared string type is only nominal.
    return value as string;
  }

  getPropIndex(property: { id: { type: string; value?: unknown } }, baseRef: unknown): unknown {
    const result = base.getPropIndex.call(this, property, baseRef);
    if (result === undefined && (Array.isArray(baseRef) || typeof baseRef === 'string')) {
      const raw = property.id.type === 'references' ? '(computed)' : String(property.id.value);
      throw new TemplateError(
        'index-out-of-bounds',
        `index ${raw} is outside a value of length ${(baseRef as unknown[] | string).length} (test the length first)`,
      );
    }
    return result;
  }

  getPropMethod(property: { id: string }, baseRef: unknown, ast: RefAst): unknown {
    const name = property.id;
    const handled = JAVA_STRING_METHODS.some((h) => h.match({ property: name, context: baseRef, params: [] }));
    const fn = baseRef !== null && baseRef !== undefined ? (baseRef as Record<string, unknown>)[name] : undefined;
    if (!handled && (typeof fn !== 'function' || (typeof baseRef === 'string' && METHOD_HINTS[name] !== undefined))) {
      const hint = METHOD_HINTS[name] ? `; use ${METHOD_HINTS[name]} instead` : '';
      throw new TemplateError(
        'method-not-found',
        `method ${name}() does not exist on ${describe(baseRef)} in ${refText(ast)}${hint}`,
      );
    }
    try {
      return base.getPropMethod.call(this, property, baseRef, ast);
    } catch (e) {
      if (e instanceof TemplateError) throw e;
      if (e instanceof TemplateIndexError)
        throw new TemplateError('index-out-of-bounds', `${e.message} in ${refText(ast)} (test the length first)`);
      throw new TemplateError('runtime', `${refText(ast)} failed: ${(e as Error).message}`);
    }
  }
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  return `a ${typeof v}`;
}

export interface CompiledTemplate {
  readonly expression: string;
  /** True when the expression mentions $counter (unique generation appends it otherwise). */
  readonly usesCounter: boolean;
  /** True when the expression renders through the compiled closures (see fast-template.ts). */
  readonly fastPath: boolean;
  /**
   * Renders with a shallow copy of `context` (plus $counter when `counter` is given, as if
   * `{...context, counter}`); throws TemplateError.
   */
  render(context: Record<string, unknown>, counter?: string): string;
}

/** `fastPath: false` renders every value through velocityjs (the reference the fast path is tested against). */
export function compileTemplate(expression: string, options: { fastPath?: boolean } = {}): CompiledTemplate {
  let ast: ReturnType<typeof parse>;
  try {
    ast = parse(expression);
  } catch (e) {
    const msg = (e as Error).message.split('\n').filter((l) => l.trim() !== '');
    throw new TemplateError('syntax', msg.join(' | '));
  }
  const compiled = new StrictCompile(ast, { escape: false, customMethodHandlers: JAVA_STRING_METHODS });
  const slow = (context: Record<string, unknown>, counter: string | undefined): string => {
    try {
      return compiled.render(counter === undefined ? { ...context } : { ...context, counter });
    } catch (e) {
      if (e instanceof TemplateError) throw e;
      throw new TemplateError('runtime', (e as Error).message);
    }
  };
  const fast = options.fastPath === false ? undefined : compileFast(ast);
  return {
    expression,
    usesCounter: /\$!?\{?counter\b/.test(expression),
    fastPath: fast !== undefined,
    render: fast
      ? (context, counter) => {
          try {
            return fast(context, counter);
          } catch {
            // BAIL, or a method that threw: velocityjs gives the value or the exact error.
            return slow(context, counter);
          }
        }
      : slow,
  };
}
