/**
 * Attribute mapping with the merge strategies. Every attribute of the contributing source
 * accounts is carried under its own name with the default strategy; "Attribute Mapping" entries
 * then define new attributes from a list of source attribute names (case-sensitive) with their
 * own strategy. Contributing accounts are visited in the order of the `sources` setting.
 */
import type { AttributeMap, FusionConfig } from '../config/fusion-config';

export interface SourceAccountView {
  sourceName: string;
  attributes: Record<string, unknown>;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

function collect(accounts: SourceAccountView[], names: string[]): unknown[] {
  const out: unknown[] = [];
  for (const account of accounts) {
    for (const name of names) {
      const v = account.attributes[name];
      if (isEmpty(v)) continue;
      if (Array.isArray(v)) {
        for (const x of v) if (!isEmpty(x)) out.push(x);
      } else {
        out.push(v);
      }
    }
  }
  return out;
}

function distinctStrings(values: unknown[]): string[] {
  const seen = new Set<string>();
  for (const v of values) seen.add(typeof v === 'string' ? v : JSON.stringify(v));
  return [...seen];
}

function mergeOne(map: AttributeMap, accounts: SourceAccountView[]): unknown {
  const names = map.existingAttributes.includes(map.newAttribute)
    ? map.existingAttributes
    : [...map.existingAttributes, map.newAttribute];
  switch (map.attributeMerge) {
    case 'first':
      return firstValue(accounts, names);
    case 'source':
      return firstValue(
        accounts.filter((a) => a.sourceName === map.source),
        names,
      );
    case 'list': {
      const values = distinctStrings(collect(accounts, names));
      return values.length ? values : undefined;
    }
    default: {
      const values = distinctStrings(collect(accounts, names));
      return values.length ? values.map((v) => `[${v}]`).join(' ') : undefined;
    }
  }
}

function firstValue(accounts: SourceAccountView[], names: string[]): unknown {
  for (const account of accounts) {
    for (const name of names) {
      const v = account.attributes[name];
      if (!isEmpty(v)) return v;
    }
  }
  return undefined;
}

/** `accounts` must already be in source priority order (see sortBySourceOrder). */
export function mergeAttributes(
  config: Pick<FusionConfig, 'attributeMerge' | 'attributeMaps'>,
  accounts: SourceAccountView[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const names = new Set<string>();
  for (const a of accounts) for (const k of Object.keys(a.attributes)) names.add(k);
  for (const name of names) {
    const v = mergeOne(
      { newAttribute: name, existingAttributes: [name], attributeMerge: config.attributeMerge },
      accounts,
    );
    if (v !== undefined) out[name] = v;
  }
  for (const map of config.attributeMaps) {
    const v = mergeOne(map, accounts);
    if (v !== undefined) out[map.newAttribute] = v;
    else delete out[map.newAttribute];
  }
  return out;
}

export function sortBySourceOrder<T extends { sourceName: string }>(sources: string[], accounts: T[]): T[] {
  const rank = (name: string): number => {
    const i = sources.indexOf(name);
    return i < 0 ? sources.length : i;
  };
  return [...accounts].sort((a, b) => rank(a.sourceName) - rank(b.sourceName));
}
