/**
 * Java String methods operators write in Velocity expressions (the platform's Velocity is Java),
 * with Java semantics where JavaScript differs: substring/charAt throw when out of range instead
 * of clamping, so a template that forgets a length test fails loudly instead of minting a short id.
 */
export class TemplateIndexError extends Error {}

type Handler = {
  uid: string;
  match: (p: { property: string; context: unknown; params: unknown[] }) => boolean;
  resolve: (p: { property: string; context: unknown; params: unknown[] }) => unknown;
};

function stringMethod(name: string, fn: (s: string, params: unknown[]) => unknown): Handler {
  return {
    uid: `fusion-${name}`,
    match: ({ property, context }) => property === name && typeof context === 'string',
    resolve: ({ context, params }) => fn(context as string, params),
  };
}

function listMethod(name: string, fn: (l: unknown[], params: unknown[]) => unknown): Handler {
  return {
    uid: `fusion-list-${name}`,
    match: ({ property, context }) => property === name && Array.isArray(context),
    resolve: ({ context, params }) => fn(context as unknown[], params),
  };
}

function toInt(v: unknown, method: string): number {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n)) throw new TemplateIndexError(`${method}: argument ${JSON.stringify(v)} is not an integer`);
  return n;
}

export const JAVA_STRING_METHODS: Handler[] = [
  stringMethod('length', (s) => s.length),
  stringMethod('isEmpty', (s) => s.length === 0),
  stringMethod('equals', (s, [o]) => s === o),
  stringMethod('equalsIgnoreCase', (s, [o]) => typeof o === 'string' && s.toLowerCase() === o.toLowerCase()),
  stringMethod('contains', (s, [o]) => s.includes(String(o))),
  stringMethod('substring', (s, params) => {
    const begin = toInt(params[0], 'substring');
    const end = params.length > 1 ? toInt(params[1], 'substring') : s.length;
    if (begin < 0 || end > s.length || begin > end) {
      throw new TemplateIndexError(`substring(${begin}, ${end}) on "${s}" of length ${s.length}`);
    }
    return s.substring(begin, end);
  }),
  listMethod('size', (l) => l.length),
  listMethod('isEmpty', (l) => l.length === 0),
  listMethod('contains', (l, [o]) => l.includes(o)),
  listMethod('get', (l, [i]) => {
    const at = toInt(i, 'get');
    if (at < 0 || at >= l.length) throw new TemplateIndexError(`get(${at}) on a list of size ${l.length}`);
    return l[at];
  }),
  stringMethod('charAt', (s, [i]) => {
    const at = toInt(i, 'charAt');
    if (at < 0 || at >= s.length) throw new TemplateIndexError(`charAt(${at}) on "${s}" of length ${s.length}`);
    return s.charAt(at);
  }),
];

/** JavaScript-only string methods a Java Velocity template cannot call, with the Java method to use. */
export const METHOD_HINTS: Record<string, string> = {
  substr: 'substring(begin, end)',
  includes: 'contains(text)',
  at: 'charAt(index)',
  slice: 'substring(begin, end)',
  padStart: 'a #if on length()',
  padEnd: 'a #if on length()',
  trimStart: 'trim()',
  trimEnd: 'trim()',
};
