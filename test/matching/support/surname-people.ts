import type { MatchRecord } from '../../../src/core/matching';
import { generate } from '../../../bench/matching-data';
import { randomRecords } from './random-records';

// Sound-alike groups (Smith/Smyth share the primary code; Schmidt only the secondary one), so the
// surname buckets are large and the combined (surname key, name token) index has work to do.
const SURNAMES = ['Smith', 'Schmidt', 'Smyth', 'Jones', 'Johns', 'Müller', ''];

/**
 * The benchmark's people (nicknames, typos, "Last, First", middle initials) on a few surnames, with
 * adversarial extras: every 4th record has two display names, every 9th an initial-only name,
 * every 13th a random string (empty, one letter, 200 characters, Unicode) as its name.
 */
export function surnamePeople(seed: number, identities: number, accounts: number): MatchRecord[] {
  const data = generate(seed, identities, accounts);
  const noise = randomRecords(seed ^ 0x5eed, identities + accounts, ['v'], 'n');
  return [...data.identities, ...data.accounts].map((r, i) => {
    const name = String(r.attributes.displayName);
    const [first = '', last = ''] = name.split(' ');
    let displayName: MatchRecord['attributes'][string] = name;
    if (i % 4 === 0) displayName = [name, `${first.charAt(0)}. ${SURNAMES[i % 5]}`];
    if (i % 9 === 0) displayName = `${first.charAt(0)} ${last.charAt(0)} ${SURNAMES[i % 6]}`;
    if (i % 13 === 0) displayName = noise[i]!.attributes.v;
    return { ...r, attributes: { ...r.attributes, lastName: SURNAMES[i % SURNAMES.length], displayName } };
  });
}
