/**
 * Domain aliases: e-mail domains the data shows to be one organisation's (a merger, a rename, a
 * contractors' domain). An organisation gives each person one local part, so two domains whose local
 * parts nearly all coincide hold the same people; a namesake at another organisation shares a local part
 * only as often as names collide. The model credits one local part at alias domains as one mailbox.
 */
import { splitEmail } from './local-part';

/** Local parts two domains must share before they can be aliases (a few coincidences are namesakes). */
export const ALIAS_MIN_SHARED = 5;
/**
 * Share of the smaller domain's local parts found at the other one. Nearly all: a domain that also
 * gives its own people addresses (a subsidiary with its own mailboxes) gives a namesake the same
 * local part, which is then no more than the names.
 */
const ALIAS_MIN_SHARE = 0.8;

/** Aliases as sorted pairs [a, b] with a < b, sorted: plain JSON for the stored parameters. */
export type DomainAliasPairs = Array<[string, string]>;

export function findDomainAliases(addresses: Iterable<string>): DomainAliasPairs {
  const domainsOf = new Map<string, Set<string>>();
  const localsIn = new Map<string, Set<string>>();
  /** Per domain: local part without digits -> local parts that have it (john.smith, john.smith2). */
  const families = new Map<string, Map<string, number>>();
  for (const address of addresses) {
    if (address === '') continue;
    const [local, domain] = splitEmail(address);
    if (local === '' || domain === '') continue;
    let locals = localsIn.get(domain);
    if (!locals) localsIn.set(domain, (locals = new Set()));
    if (locals.has(local)) continue;
    locals.add(local);
    let family = families.get(domain);
    if (!family) families.set(domain, (family = new Map()));
    const letters = withoutDigits(local);
    family.set(letters, (family.get(letters) ?? 0) + 1);
    let set = domainsOf.get(local);
    if (!set) domainsOf.set(local, (set = new Set()));
    set.add(domain);
  }
  const shared = new Map<string, number>();
  for (const domains of domainsOf.values()) {
    if (domains.size < 2) continue;
    // A local part at very many domains (info@, admin@) says nothing about any two of them.
    if (domains.size > 8) continue;
    const list = [...domains].sort();
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const key = `${list[i]}\n${list[j]}`;
        shared.set(key, (shared.get(key) ?? 0) + 1);
      }
  }
  const pairs: DomainAliasPairs = [];
  for (const [key, count] of shared) {
    if (count < ALIAS_MIN_SHARED) continue;
    const [a, b] = key.split('\n') as [string, string];
    const [small, large] = localsIn.get(a)!.size <= localsIn.get(b)!.size ? [a, b] : [b, a];
    // Only local parts no namesake shares in either domain (no john.smith2 beside john.smith): a
    // common one (jchen) is found at both domains by coincidence as often as the name is common.
    const famS = families.get(small)!;
    const famL = families.get(large)!;
    const other = localsIn.get(large)!;
    let plain = 0;
    let found = 0;
    for (const local of localsIn.get(small)!) {
      const letters = withoutDigits(local);
      if ((famS.get(letters) ?? 0) > 1 || (famL.get(letters) ?? 0) > 1) continue;
      plain++;
      if (other.has(local)) found++;
    }
    if (found >= ALIAS_MIN_SHARED && found >= ALIAS_MIN_SHARE * plain) pairs.push([a, b]);
  }
  return pairs.sort((x, y) => (x[0] === y[0] ? x[1].localeCompare(y[1]) : x[0].localeCompare(y[0])));
}

function withoutDigits(local: string): string {
  return /[0-9]/.test(local) ? local.replace(/[0-9]/g, '') : local;
}

/** Parses stored aliases; anything malformed is dropped (they only ever add evidence). */
export function aliasPairsFrom(raw: unknown): DomainAliasPairs {
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (p): p is [string, string] =>
      Array.isArray(p) && p.length === 2 && p.every((d) => typeof d === 'string' && d !== ''),
  );
}

export function aliasKey(a: string, b: string): string {
  return a < b ? `${a}\n${b}` : `${b}\n${a}`;
}
