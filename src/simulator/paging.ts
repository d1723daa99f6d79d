import { badRequest } from './errors';

export interface ListParams {
  limit: number;
  offset: number;
  count: boolean;
}

function intParam(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw badRequest(`Query parameter ${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

/** limit/offset/count as the platform validates them: a limit over the maximum is a 400, not a clamp. */
export function listParams(query: Record<string, string>, maxLimit: number, defaultLimit = maxLimit): ListParams {
  const limit = intParam(query['limit'], 'limit', defaultLimit);
  const offset = intParam(query['offset'], 'offset', 0);
  if (limit < 1 || limit > maxLimit) throw badRequest(`limit must be between 1 and ${maxLimit}, got ${limit}`);
  return { limit, offset, count: query['count'] === 'true' };
}

/** 1-based page index of an offset/limit request, for page-targeted fault injection. */
export function pageOfQuery(query: Record<string, string>, defaultLimit: number): number {
  const limit = Number(query['limit'] ?? defaultLimit) || defaultLimit;
  const offset = Number(query['offset'] ?? 0) || 0;
  return Math.floor(offset / limit) + 1;
}

interface CacheEntry {
  version: number;
  items: unknown[];
}

/**
 * Caches filtered + sorted result lists per query so that walking N pages of a 100k list costs one
 * filter pass, not N. Invalidated by the collection version; small LRU.
 */
export class ListCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(private readonly capacity = 32) {}

  get<T>(key: string, version: number, compute: () => T[]): T[] {
    const hit = this.entries.get(key);
    if (hit && hit.version === version) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.items as T[];
    }
    const items = compute();
    this.entries.set(key, { version, items });
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return items;
  }
}

/** Remembers where each searchAfter cursor points, so a search page can be identified by its index. */
export class SearchCursors {
  private readonly pages = new Map<string, number>();

  remember(searchAfter: unknown[], nextPage: number): void {
    if (this.pages.size > 50_000) this.pages.clear();
    this.pages.set(JSON.stringify(searchAfter), nextPage);
  }

  pageOf(searchAfter: unknown[] | undefined): number | undefined {
    if (!searchAfter || searchAfter.length === 0) return 1;
    return this.pages.get(JSON.stringify(searchAfter));
  }
}

type Sorter = { field: string; desc: boolean };

export function parseSorters(raw: string | undefined, allowed: readonly string[]): Sorter[] {
  if (!raw) return [];
  return raw.split(',').map((s) => {
    const t = s.trim();
    const desc = t.startsWith('-');
    const field = desc ? t.slice(1) : t;
    if (!allowed.includes(field)) throw badRequest(`Unsupported sorter "${field}"; supported: ${allowed.join(', ')}`);
    return { field, desc };
  });
}

export function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return -1;
  if (b === undefined || b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export function sortBy<T>(items: T[], sorters: Sorter[], get: (item: T, field: string) => unknown): T[] {
  if (sorters.length === 0) return items;
  return [...items].sort((x, y) => {
    for (const s of sorters) {
      const c = compareValues(get(x, s.field), get(y, s.field));
      if (c !== 0) return s.desc ? -c : c;
    }
    return 0;
  });
}
