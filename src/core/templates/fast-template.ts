/**
 * A compiler from velocityjs's own AST to JavaScript closures, for the Velocity subset identity
 * templates use: text, references ($a, $!a, ${a}, $a.b) with Java string methods, #if/#elseif/#else
 * with velocityjs's operators, and #set of a plain variable. It reproduces what StrictCompile does
 * for those nodes, step for step, without velocityjs's per-render bookkeeping.
 *
 * Equivalence rules:
 * - Anything outside the subset makes compileFast() return undefined at compile time: the template
 *   then always renders through velocityjs.
 * - The closures never write to the caller's context (a template with #set renders on a copy, as
 *   velocityjs does) and call only side-effect-free string methods; whenever a value is not one the
 *   fast path reproduces exactly (a null reference, a non-string receiver, an array to print, a
 *   method that throws), it throws BAIL and the caller renders that value through velocityjs, which
 *   then returns or throws exactly what it always did.
 */
import { JAVA_STRING_METHODS, METHOD_HINTS } from './velocity-methods';

/** Thrown by a fast template for a value it does not render itself. */
export const BAIL: unique symbol = Symbol('fast-template-bail');

type Ctx = Record<string, unknown>;
/** `counter`, when defined, is the value of $counter (the context is read as if {...ctx, counter}). */
type Eval = (ctx: Ctx, counter: string | undefined) => unknown;
type Out = (ctx: Ctx, counter: string | undefined) => string;

/** Thrown while compiling: the node is outside the subset. */
class Unsupported extends Error {}

const isEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * Names velocityjs resolves through Object.prototype on the context copy, or blocks as prototype
 * keys; a template using one as a variable or property goes through velocityjs.
 */
const awkward = (name: string): boolean => name in Object.prototype || name === 'prototype' || name === '__proto__';

/**
 * Native string methods the fast path calls directly: pure, not named get*, is*, set* (velocityjs's
 * own bean-style handlers would claim those) and not in METHOD_HINTS (those are errors).
 */
const NATIVE_STRING_METHODS = new Set([
  'toLowerCase',
  'toUpperCase',
  'trim',
  'replace',
  'replaceAll',
  'concat',
  'indexOf',
  'lastIndexOf',
  'startsWith',
  'endsWith',
  'normalize',
  'repeat',
]);
/** velocityjs's built-in Java-style handlers: a method of one of these names is left to velocityjs. */
const VELOCITYJS_HANDLER_NAMES = new Set([
  'get',
  'set',
  'keySet',
  'entrySet',
  'size',
  'put',
  'add',
  'remove',
  'subList',
]);

interface Node {
  type?: string;
  [key: string]: unknown;
}

const bail = (): never => {
  throw BAIL;
};

type Step = (v: unknown, ctx: Ctx, counter: string | undefined) => unknown;

/** The context copy's own value: what `{...ctx}[id]` gives for a name not on Object.prototype. */
function own(c: Ctx, id: string): unknown {
  const v = c[id];
  return v === undefined || isEnumerable.call(c, id) ? v : bail();
}

/** velocityjs's getRefText for the references of the subset (literal arguments only). */
function refText(n: Node): string {
  let text = `${String(n.leader)}${n.isWraped ? '{' : ''}${String(n.id)}`;
  for (const p of (n.path as Node[] | undefined) ?? []) {
    if (p.type === 'method') {
      const args = ((p.args as Node[] | false | undefined) || []).map((a) => literalText(a));
      text += `.${String(p.id)}(${args.join(',')})`;
    } else if (p.type === 'property') text += `.${String(p.id)}`;
    else throw new Unsupported(String(p.type));
  }
  return n.isWraped ? `${text}}` : text;
}

function literalText(a: Node): string {
  switch (a.type) {
    case 'string': {
      const sign = a.isEval ? '"' : "'";
      return `${sign}${String(a.value)}${sign}`;
    }
    case 'integer':
    case 'bool':
      return String(a.value);
    case 'references':
      return refText(a);
    default:
      throw new Unsupported(String(a.type));
  }
}

class FastCompiler {
  /** Reference texts velocityjs first looks up verbatim in the context (e.g. a key "$firstName"). */
  readonly refTexts = new Set<string>();
  hasSet = false;

  compileList(nodes: unknown[]): Out {
    const parts = nodes.map((n) => this.compileNode(n)).filter((p): p is Out | string => p !== undefined);
    // Adjacent text is joined once here instead of per render.
    const merged: (Out | string)[] = [];
    for (const p of parts) {
      const last = merged[merged.length - 1];
      if (typeof p === 'string' && typeof last === 'string') merged[merged.length - 1] = last + p;
      else merged.push(p);
    }
    if (merged.length === 0) return () => '';
    if (merged.length === 1) {
      const only = merged[0]!;
      return typeof only === 'string' ? () => only : only;
    }
    const fns = merged.map((p) => (typeof p === 'string' ? () => p : p));
    if (fns.length === 2) {
      const [a, b] = fns as [Out, Out];
      return (c, k) => a(c, k) + b(c, k);
    }
    if (fns.length === 3) {
      const [a, b, d] = fns as [Out, Out, Out];
      return (c, k) => a(c, k) + b(c, k) + d(c, k);
    }
    return (c, k) => {
      let s = '';
      for (let i = 0; i < fns.length; i++) s += fns[i]!(c, k);
      return s;
    };
  }

  private compileNode(node: unknown): Out | string | undefined {
    if (typeof node === 'string') return node;
    if (Array.isArray(node)) return this.compileBlock(node);
    const n = node as Node;
    switch (n.type) {
      case 'comment':
        return undefined;
      case 'raw':
        return String(n.value);
      case 'references':
        return this.compileOutput(n);
      case 'set':
        return this.compileSet(n);
      default:
        throw new Unsupported(String(n.type));
    }
  }

  private compileBlock(block: unknown[]): Out {
    const head = block[0] as Node | undefined;
    if (head?.type !== 'if') throw new Unsupported(String(head?.type));
    // velocityjs renders the statements after the first condition (in order) that holds.
    const branches: { cond: Eval | undefined; body: unknown[] }[] = [];
    for (const item of block) {
      const t = (item as Node).type;
      if (typeof item === 'object' && item !== null && !Array.isArray(item) && (t === 'if' || t === 'elseif')) {
        branches.push({ cond: this.compileExpression((item as Node).condition as Node), body: [] });
      } else if (typeof item === 'object' && item !== null && !Array.isArray(item) && t === 'else') {
        branches.push({ cond: undefined, body: [] });
      } else {
        branches[branches.length - 1]!.body.push(item);
      }
    }
    const compiled = branches.map((b) => ({ cond: b.cond, body: this.compileList(b.body) }));
    if (compiled.length === 2 && compiled[0]!.cond && !compiled[1]!.cond) {
      const [{ cond, body: yes }, { body: no }] = compiled as [{ cond: Eval; body: Out }, { body: Out }];
      return (c, k) => (cond(c, k) ? yes(c, k) : no(c, k));
    }
    return (c, k) => {
      for (const b of compiled) if (!b.cond || b.cond(c, k)) return b.body(c, k);
      return '';
    };
  }

  /** Writes the (copied) context and prints nothing; only top-level names, as velocityjs's setValue. */
  private compileSet(n: Node): Out {
    const [ref, value] = n.equal as [Node, Node];
    if (ref.path !== undefined || awkward(String(ref.id))) throw new Unsupported('#set of a path');
    const id = String(ref.id);
    const val = value.type === 'math' ? this.compileExpression(value) : this.compileLiteral(value);
    this.hasSet = true;
    return (c, k) => {
      c[id] = val(c, k);
      return '';
    };
  }

  /** A reference printed into the output: strict about null, formatting as velocityjs does. */
  private compileOutput(n: Node): Out {
    const get = this.compileReference(n);
    const quiet = n.leader === '$!';
    return (c, k) => {
      const v = get(c, k);
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      if ((v === undefined || v === null) && quiet) return '';
      return bail();
    };
  }

  /** The raw value of a reference (what velocityjs's getReferences returns with isVal false). */
  private compileReference(n: Node): Eval {
    if (n.args !== undefined || (n.leader !== '$' && n.leader !== '$!')) throw new Unsupported('function reference');
    const id = String(n.id);
    if (awkward(id)) throw new Unsupported('prototype name');
    this.refTexts.add(refText(n));
    const root: Eval = id === 'counter' ? (c, k) => (k !== undefined ? k : own(c, id)) : (c) => own(c, id);
    const path = (n.path as Node[] | undefined) ?? [];
    const steps = path.map((p) => this.compileStep(p));
    if (steps.length === 0) return root;
    if (steps.length === 1) {
      const [s] = steps as [Step];
      return (c, k) => {
        const v = root(c, k);
        return v === undefined || v === null ? undefined : s(v, c, k);
      };
    }
    return (c, k) => {
      let v = root(c, k);
      for (let i = 0; i < steps.length; i++) {
        if (v === undefined || v === null) return undefined;
        v = steps[i]!(v, c, k);
      }
      return v;
    };
  }

  private compileStep(p: Node): Step {
    const name = String(p.id);
    if (p.type === 'property') {
      if (awkward(name)) throw new Unsupported('prototype name');
      return (v) => (v as Record<string, unknown>)[name];
    }
    if (p.type !== 'method') throw new Unsupported(String(p.type));
    const args = ((p.args as Node[] | false | undefined) || []).map((a) => this.compileLiteral(a));
    const handler = JAVA_STRING_METHODS.find((h) => h.uid === `fusion-${name}`);
    if (handler) {
      const call = (s: string, params: unknown[]): unknown => handler.resolve({ property: name, context: s, params });
      if (args.length === 0) return (v) => (typeof v === 'string' ? call(v, []) : bail());
      return (v, c, k) =>
        typeof v === 'string'
          ? call(
              v,
              args.map((a) => a(c, k)),
            )
          : bail();
    }
    if (!NATIVE_STRING_METHODS.has(name) || METHOD_HINTS[name] !== undefined || VELOCITYJS_HANDLER_NAMES.has(name)) {
      throw new Unsupported(`method ${name}`);
    }
    const fn = (String.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!;
    if (args.length === 0) return (v) => (typeof v === 'string' ? fn.call(v) : bail());
    return (v, c, k) =>
      typeof v === 'string'
        ? fn.apply(
            v,
            args.map((a) => a(c, k)),
          )
        : bail();
  }

  /** velocityjs's getLiteral for the literal kinds of the subset. */
  compileLiteral(n: Node): Eval {
    switch (n.type) {
      case 'string': {
        const s = String(n.value);
        if (n.isEval && (s.includes('#') || s.includes('$'))) throw new Unsupported('interpolated string');
        return () => s;
      }
      case 'integer': {
        const v = parseInt(String(n.value), 10);
        return () => v;
      }
      case 'decimal': {
        const v = parseFloat(String(n.value));
        return () => v;
      }
      case 'bool': {
        const v = n.value === 'true' ? true : n.value === 'false' ? false : n.value === 'null' ? null : undefined;
        return () => v;
      }
      case 'references':
        return this.compileReference(n);
      default:
        throw new Unsupported(String(n.type));
    }
  }

  /** velocityjs's getExpression, operator for operator (JavaScript semantics, loose ==). */
  compileExpression(n: Node): Eval {
    if (n.type !== 'math') return this.compileLiteral(n);
    const [x, y] = ((n.expression as Node[]) ?? []).map((e) => this.compileExpression(e)) as [Eval, Eval];
    type V = number;
    switch (n.operator) {
      case '+':
        return (c, k) => (x(c, k) as V) + (y(c, k) as V);
      case '-':
        return (c, k) => (x(c, k) as V) - (y(c, k) as V);
      case '/':
        return (c, k) => (x(c, k) as V) / (y(c, k) as V);
      case '%':
        return (c, k) => (x(c, k) as V) % (y(c, k) as V);
      case '*':
        return (c, k) => (x(c, k) as V) * (y(c, k) as V);
      case '||':
        return (c, k) => x(c, k) || y(c, k);
      case '&&':
        return (c, k) => x(c, k) && y(c, k);
      case '>':
        return (c, k) => (x(c, k) as V) > (y(c, k) as V);
      case '<':
        return (c, k) => (x(c, k) as V) < (y(c, k) as V);
      case '>=':
        return (c, k) => (x(c, k) as V) >= (y(c, k) as V);
      case '<=':
        return (c, k) => (x(c, k) as V) <= (y(c, k) as V);
      case '==':
        // eslint-disable-next-line eqeqeq -- velocityjs compares with ==
        return (c, k) => x(c, k) == y(c, k);
      case '!=':
        // eslint-disable-next-line eqeqeq -- velocityjs compares with !=
        return (c, k) => x(c, k) != y(c, k);
      case 'minus':
        return (c, k) => -(x(c, k) as V);
      case 'not':
        return (c, k) => !x(c, k);
      case 'parenthesis':
        return x;
      default:
        throw new Unsupported(String(n.operator));
    }
  }
}

export interface FastRender {
  /** Renders as velocityjs would render `{...ctx, counter}` (counter omitted when undefined); throws BAIL. */
  (ctx: Ctx, counter: string | undefined): string;
}

/** The fast renderer of a parsed template, or undefined when the template is outside the subset. */
export function compileFast(ast: unknown[]): FastRender | undefined {
  const compiler = new FastCompiler();
  let body: Out;
  try {
    body = compiler.compileList(ast);
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
  const texts = [...compiler.refTexts];
  // velocityjs first returns a context value stored under a reference's whole text ("$a.b").
  const guarded: Out =
    texts.length === 0
      ? body
      : (c, k) => {
          for (let i = 0; i < texts.length; i++) if (texts[i]! in c) bail();
          return body(c, k);
        };
  if (!compiler.hasSet) return guarded;
  // #set writes to the context: render on a copy, as velocityjs does.
  return (c, k) => guarded(k === undefined ? { ...c } : { ...c, counter: k }, undefined);
}
