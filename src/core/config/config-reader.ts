/**
 * Small typed readers for the raw configuration object. Every problem is recorded (not thrown)
 * so an operator sees all invalid fields in one error, each with the field, the value and what
 * is allowed. Secret fields are never echoed.
 */
import { FusionError } from '../errors';
import { REDACTED, isSecretKey } from '../../secrets/redaction';

export interface ConfigProblem {
  field: string;
  /** The offending value rendered for humans; the one placeholder (src/secrets/) for a secret. */
  value: string;
  allowed: string;
  /** The code of a problem with a code of its own (the matching settings); CONFIG_INVALID otherwise. */
  code?: 'MATCHING_INVALID';
}

function showValue(field: string, value: unknown): string {
  // The one secret rule decides which fields hold a secret (src/secrets/redaction.ts).
  if (isSecretKey(field.split('.').pop() ?? field)) return REDACTED;
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  try {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return String(value);
  }
}

export class ConfigReader {
  readonly problems: ConfigProblem[] = [];

  /**
   * Throws one error listing every problem recorded (field, value, what is allowed):
   * MATCHING_INVALID when only the matching settings are wrong, CONFIG_INVALID otherwise.
   */
  assertValid(): void {
    const problems = this.problems;
    if (problems.length === 0) return;
    const lines = problems.map((p) => `${p.field} = ${p.value}: allowed ${p.allowed}`);
    if (problems.every((p) => p.code === 'MATCHING_INVALID')) {
      throw new FusionError('MATCHING_INVALID', `Invalid matching settings: ${lines.join('; ')}`, {
        problems,
        field: problems[0]?.field,
      });
    }
    throw new FusionError('CONFIG_INVALID', `Invalid configuration: ${lines.join('; ')}`, {
      problems,
      field: problems[0]?.field,
    });
  }

  problem(field: string, value: unknown, allowed: string): void {
    this.problems.push({ field, value: showValue(field, value), allowed });
  }

  bool(obj: Record<string, unknown>, key: string, def: boolean, path = key): boolean {
    const v = obj[key];
    if (v === undefined || v === null) return def;
    if (typeof v === 'boolean') return v;
    // The platform UI stores toggles as booleans, but proxied configs edited by hand often carry strings.
    if (v === 'true') return true;
    if (v === 'false') return false;
    this.problem(path, v, 'a boolean (true or false)');
    return def;
  }

  int(obj: Record<string, unknown>, key: string, def: number, min: number, max: number, path = key): number {
    return this.num(obj, key, def, min, max, path, true);
  }

  num(
    obj: Record<string, unknown>,
    key: string,
    def: number,
    min: number,
    max: number,
    path = key,
    integer = false,
  ): number {
    const v = obj[key];
    if (v === undefined || v === null || v === '') return def;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
    const kind = integer ? 'an integer' : 'a number';
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
      this.problem(path, v, `${kind} from ${min} to ${max}`);
      return def;
    }
    return n;
  }

  str(obj: Record<string, unknown>, key: string, def: string, path = key): string {
    const v = obj[key];
    if (v === undefined || v === null) return def;
    if (typeof v !== 'string') {
      this.problem(path, v, 'a string');
      return def;
    }
    return v;
  }

  requiredStr(obj: Record<string, unknown>, key: string, path = key): string {
    const v = obj[key];
    if (typeof v !== 'string' || v.trim() === '') {
      this.problem(path, v, 'a non-empty string (required)');
      return '';
    }
    return v;
  }

  url(obj: Record<string, unknown>, key: string, required: boolean, path = key): string {
    const v = obj[key];
    if ((v === undefined || v === null || v === '') && !required) return '';
    if (typeof v !== 'string' || !isHttpUrl(v)) {
      this.problem(path, v, required ? 'an http(s) URL (required)' : 'an http(s) URL');
      return '';
    }
    return v.replace(/\/+$/, '');
  }

  oneOf<T extends string>(
    obj: Record<string, unknown>,
    key: string,
    allowed: readonly T[],
    def: T,
    path = key,
    caseInsensitive = false,
  ): T {
    const v = obj[key];
    if (v === undefined || v === null || v === '') return def;
    if (typeof v === 'string') {
      const hit = allowed.find((a) => (caseInsensitive ? a.toLowerCase() === v.toLowerCase() : a === v));
      if (hit) return hit;
    }
    this.problem(path, v, `one of ${allowed.join(', ')}`);
    return def;
  }

  stringList(
    obj: Record<string, unknown>,
    key: string,
    path = key,
    opts: { required?: boolean; unique?: boolean } = {},
  ): string[] {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (opts.required) this.problem(path, v, 'a non-empty list of names (required)');
      return [];
    }
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x.trim() === '')) {
      this.problem(path, v, 'a list of non-empty strings');
      return [];
    }
    const list = v as string[];
    if (opts.required && list.length === 0) this.problem(path, v, 'a non-empty list of names (required)');
    if (opts.unique) {
      const seen = new Set<string>();
      for (const s of list) {
        if (seen.has(s)) this.problem(path, v, `names without duplicates ("${s}" appears twice)`);
        seen.add(s);
      }
    }
    return list;
  }

  objectList(obj: Record<string, unknown>, key: string, path = key): Record<string, unknown>[] {
    const v = obj[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => !isRecord(x))) {
      this.problem(path, v, 'a list of objects');
      return [];
    }
    return v as Record<string, unknown>[];
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
