import { badRequest } from './errors';

export interface JsonPatchOp {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

/** Validates a request body as an RFC 6902 patch (the add/replace/remove subset the platform endpoints take). */
export function parsePatch(body: unknown): JsonPatchOp[] {
  if (!Array.isArray(body) || body.length === 0) throw badRequest('Request body must be a non-empty JSON Patch array');
  return body.map((raw, i) => {
    if (raw === null || typeof raw !== 'object') throw badRequest(`JSON Patch operation ${i} is not an object`);
    const op = (raw as Record<string, unknown>)['op'];
    const path = (raw as Record<string, unknown>)['path'];
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw badRequest(`JSON Patch operation ${i}: unsupported op "${String(op)}"`);
    if (typeof path !== 'string' || !path.startsWith('/'))
      throw badRequest(`JSON Patch operation ${i}: path must start with "/"`);
    if (op !== 'remove' && !('value' in raw)) throw badRequest(`JSON Patch operation ${i}: "${op}" needs a value`);
    return { op, path, value: (raw as Record<string, unknown>)['value'] };
  });
}

function pointerSegments(path: string): string[] {
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Applies the ops to a deep copy of `target`; the original is untouched when an op fails. */
export function applyPatch<T extends object>(target: T, ops: JsonPatchOp[]): T {
  const doc = structuredClone(target) as Record<string, unknown>;
  for (const op of ops) {
    const segs = pointerSegments(op.path);
    const last = segs.pop() as string;
    let parent: unknown = doc;
    for (const s of segs) {
      if (parent === null || typeof parent !== 'object') throw badRequest(`JSON Patch path ${op.path} does not exist`);
      let child = (parent as Record<string, unknown>)[s];
      if (child === undefined && op.op !== 'remove') {
        child = {};
        (parent as Record<string, unknown>)[s] = child;
      }
      parent = child;
    }
    if (parent === null || typeof parent !== 'object') throw badRequest(`JSON Patch path ${op.path} does not exist`);
    if (Array.isArray(parent)) {
      const idx = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(idx) || idx < 0 || idx > parent.length)
        throw badRequest(`JSON Patch index ${last} out of range`);
      if (op.op === 'add') parent.splice(idx, 0, structuredClone(op.value));
      else if (op.op === 'replace') parent[idx] = structuredClone(op.value);
      else parent.splice(idx, 1);
    } else {
      const obj = parent as Record<string, unknown>;
      if (op.op === 'remove') {
        if (!(last in obj)) throw badRequest(`JSON Patch path ${op.path} does not exist`);
        delete obj[last];
      } else obj[last] = structuredClone(op.value);
    }
  }
  return doc as T;
}
