import { NICKNAME_GROUPS } from './nickname-data';

/**
 * Nickname equivalence groups from public maintained data (nickname-data.ts: one line per name,
 * the name then its nicknames). A name may appear in several groups (e.g. "bert" for Albert and
 * Robert); two tokens are nicknames of one another when they share a group.
 */
const GROUPS = NICKNAME_GROUPS;

const groupsOf = new Map<string, number[]>();
GROUPS.trim()
  .split('\n')
  .forEach((line, group) => {
    for (const name of line.trim().split(/\s+/)) {
      const list = groupsOf.get(name);
      if (list) {
        if (!list.includes(group)) list.push(group);
      } else groupsOf.set(name, [group]);
    }
  });

const NONE: readonly number[] = [];

/** Nickname group ids of a normalised token (empty when it is not in the table). */
export function nicknameGroups(token: string): readonly number[] {
  return groupsOf.get(token) ?? NONE;
}

/** Two given names of one person: equal (more than an initial), or nicknames of one another. */
export function sameGivenName(a: string, b: string): boolean {
  if (a === b) return a.length > 1;
  const ga = nicknameGroups(a);
  return ga.length > 0 && nicknameGroups(b).some((g) => ga.includes(g));
}

/** Number of (name, nickname) pairs in the table, for the README and tests. */
export function nicknamePairCount(): number {
  return GROUPS.trim()
    .split('\n')
    .reduce((n, line) => n + line.trim().split(/\s+/).length - 1, 0);
}
