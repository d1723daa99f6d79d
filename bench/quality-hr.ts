/**
 * HR-like labelled sets for bench:quality, generated from another angle than the model's assumptions:
 * names drawn from frequency tables of several cultures (name-tables.ts), an e-mail convention per set
 * (some the model does not recognise as built from the names), departments, employee numbers that
 * differ across sources for a share of one person's records, changed departments, surname changes with
 * and without a new address, numbered mailboxes in one domain, nicknames, namesakes, and a chosen share
 * of accounts that have a duplicate (1 %, 40 %, every account). Every record carries every attribute a
 * configuration may list (displayName, firstName, lastName, email, employeeNumber, department and a
 * random code), each sometimes missing as real sources leave them.
 */
import { cumulativeIndex, rng } from './matching-data';
import { CULTURES, NICKNAMES, type Table, table } from './name-tables';
import type { Labelled } from './quality-data';

export type EmailStyle = 'first.last' | 'flast' | 'trunc8' | 'first.m.last' | 'last.first';

export interface HrSpec {
  name: string;
  seed: number;
  identities: number;
  accounts: number;
  /** Share of accounts that are another record of a person already there. */
  duplicates: number;
  /** Culture -> share of people. */
  cultures: Record<string, number>;
  email: EmailStyle;
  /** Share of one person's records (both holding a number) whose employee numbers differ. */
  idDiffer: number;
  /** Share of duplicates in another department. */
  deptChange: number;
  /** Share of the accounts without a duplicate that are namesakes of an identity. */
  namesakes: number;
  /** Some sources write "Last, First". */
  reordered?: boolean;
}

export const MIXED = { anglo: 45, hispanic: 15, chinese: 10, vietnamese: 8, indian: 10, germanic: 7, nigerian: 5 };
export const ASIAN = { chinese: 35, vietnamese: 30, indian: 15, anglo: 20 };

/** The HR-like set of the goals (hr-mixed): what every other generator setting varies. */
export const HR_BASE = {
  identities: 5000,
  accounts: 3000,
  duplicates: 0.4,
  cultures: MIXED,
  email: 'first.last',
  idDiffer: 0.2,
  deptChange: 0.25,
  namesakes: 0.2,
} as const;

const DEPARTMENTS = `finance sales marketing engineering operations legal hr it support research logistics procurement
  facilities security quality training design compliance audit treasury`.split(/\s+/);

interface Sampler {
  surname: () => string;
  given: () => string;
}

function sampler(culture: string, r: () => number): Sampler {
  const c = CULTURES[culture]!;
  const s: Table = table(c.surnames);
  const g: Table = table(c.given);
  const [heads, tails] = c.tail.map((x) => x.split(/\s+/)) as [string[], string[]];
  const pick = (t: Table): string => t.names[cumulativeIndex(t.cumulative, r() * t.cumulative.at(-1)!)]!;
  const one = (): string =>
    r() < c.tailShare ? heads[Math.floor(r() * heads.length)]! + tails[Math.floor(r() * tails.length)]! : pick(s);
  return {
    surname: () => (c.doubleSurname && r() < c.doubleSurname ? `${one()} ${one()}` : one()),
    given: () => pick(g),
  };
}

function plain(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/đ/g, 'd')
    .replace(/[^a-z]/g, '');
}

function cap(s: string): string {
  return s.replace(/(^|[ \-'])(\p{L})/gu, (_, sep: string, c: string) => sep + c.toUpperCase());
}

function typo(s: string, r: () => number): string {
  if (s.length < 3) return s;
  const i = 1 + Math.floor(r() * (s.length - 1));
  const k = Math.floor(r() * 3);
  if (k === 0) return s.slice(0, i) + s.slice(i + 1);
  if (k === 1) return s.slice(0, i) + s[i] + s.slice(i); // doubled letter
  return s.slice(0, i - 1) + (s[i] ?? '') + s[i - 1] + s.slice(i + 1); // transposition
}

interface Person {
  id: string;
  first: string;
  last: string;
  middle: string;
  culture: string;
  employee: string;
  department: string;
}

export function hrSet(spec: HrSpec): Labelled {
  const r = rng(spec.seed * 104729 + 17);
  const cultures = Object.entries(spec.cultures);
  const cultureTotal = cultures.reduce((s, [, w]) => s + w, 0);
  const samplers = new Map(cultures.map(([c]) => [c, sampler(c, r)]));
  const pickCulture = (): string => {
    let x = r() * cultureTotal;
    for (const [c, w] of cultures) if ((x -= w) < 0) return c;
    return cultures[0]![0];
  };
  const domain = `${['corp', 'group', 'hq', 'intl'][spec.seed % 4]}.example`;
  const subsidiary = `${['north', 'labs', 'retail', 'services'][spec.seed % 4]}.example`;
  const usedLocal = new Map<string, number>();
  const mailbox = (p: Person, first: string, last: string, at: string): string => {
    const f = plain(first);
    const l = plain(last);
    let base: string;
    switch (spec.email) {
      case 'first.last':
        base = `${f}.${l}`;
        break;
      case 'flast':
        base = `${f[0] ?? ''}${l}`;
        break;
      case 'trunc8':
        base = `${f[0] ?? ''}${l}`.slice(0, 8);
        break;
      case 'first.m.last':
        base = `${f}.${p.middle}.${l}`;
        break;
      case 'last.first':
        base = `${l}.${f}`;
        break;
    }
    const key = `${base}@${at}`;
    const n = (usedLocal.get(key) ?? 0) + 1;
    usedLocal.set(key, n);
    return `${base}${n > 1 ? n : ''}@${at}`;
  };
  let pid = 0;
  let employeeSeq = 0;
  const newPerson = (culture = pickCulture(), first?: string, last?: string): Person => {
    const s = samplers.get(culture)!;
    return {
      id: `p${pid++}`,
      first: first ?? s.given(),
      last: last ?? s.surname(),
      middle: 'abcdefghijklmnoprstw'[Math.floor(r() * 20)]!,
      culture,
      employee: String(200000 + (employeeSeq += 1 + Math.floor(r() * 5))),
      department: DEPARTMENTS[Math.min(DEPARTMENTS.length - 1, Math.floor(DEPARTMENTS.length * r() ** 1.6))]!,
    };
  };
  const mainEmail = new Map<string, string>();
  const out: Labelled = { name: spec.name, identities: [], accounts: [], person: new Map(), kind: new Map() };
  const code = (): string => `R${Math.floor(r() * 100)}`;
  const display = (first: string, last: string, middle?: string): string =>
    spec.reordered && r() < 0.15
      ? cap(`${last}, ${first}`)
      : cap(middle ? `${first} ${middle} ${last}` : `${first} ${last}`);

  const people: Person[] = [];
  for (let i = 0; i < spec.identities; i++) {
    const p = newPerson();
    people.push(p);
    const email = mailbox(p, p.first, p.last, domain);
    mainEmail.set(p.id, email);
    const id = `id-${i}`;
    out.identities.push({
      id,
      attributes: {
        displayName: display(p.first, p.last),
        firstName: cap(p.first),
        lastName: cap(p.last),
        ...(r() < 0.96 ? { email } : {}),
        ...(r() < 0.92 ? { employeeNumber: p.employee } : {}),
        ...(r() < 0.95 ? { department: p.department } : {}),
        randomCode: code(),
      },
    });
    out.person.set(id, p.id);
  }

  const accountsOf: Array<{ p: Person }> = [];
  for (let a = 0; a < spec.accounts; a++) {
    const id = `acc-${a}`;
    let p: Person;
    let kind: string;
    let first: string;
    let last: string;
    let email: string | undefined;
    let employee: string | undefined;
    let department: string | undefined = undefined;
    let middle: string | undefined;
    if (r() >= spec.duplicates) {
      if (r() < spec.namesakes) {
        const twin = people[Math.floor(r() * people.length)]!;
        p = newPerson(twin.culture, twin.first, twin.last);
        kind = 'namesake';
      } else {
        p = newPerson();
        kind = 'new';
      }
      first = p.first;
      last = p.last;
      email = r() < 0.8 ? mailbox(p, first, last, r() < 0.85 ? domain : subsidiary) : undefined;
      if (email) mainEmail.set(p.id, email);
      employee = r() < 0.6 ? p.employee : undefined;
      department = r() < 0.8 ? p.department : undefined;
    } else {
      // Another record of someone already there: an identity, or now and then an earlier account's person.
      p =
        accountsOf.length > 0 && r() < 0.1
          ? accountsOf[Math.floor(r() * accountsOf.length)]!.p
          : people[Math.floor(r() * people.length)]!;
      first = p.first;
      last = p.last;
      email = mainEmail.get(p.id);
      const x = r();
      kind = 'exact';
      if (x < 0.1) {
        kind = NICKNAMES[plain(first)] ? 'nickname' : 'exact';
        if (kind === 'nickname') first = NICKNAMES[plain(first)]!;
      } else if (x < 0.2) {
        kind = 'typo';
        if (r() < 0.6) last = typo(last, r);
        else first = typo(first, r);
      } else if (x < 0.26) {
        kind = 'accents';
        first = plain(first) === first ? first : first.normalize('NFD').replace(/\p{M}+/gu, '');
        last = last.normalize('NFD').replace(/\p{M}+/gu, '');
      } else if (x < 0.33) {
        kind = 'surname-new-email';
        last = samplers.get(p.culture)!.surname();
        email = mailbox(p, first, last, domain);
      } else if (x < 0.38) {
        kind = 'surname-old-email';
        last = samplers.get(p.culture)!.surname();
      } else if (x < 0.46) {
        kind = 'new-domain';
        // The subsidiary's own mailbox: its local part, numbered when someone there has it already.
        email = mailbox(p, first, last, subsidiary);
      } else if (x < 0.5) {
        kind = 'middle-name';
        middle = cap(samplers.get(p.culture)!.given());
      } else if (x < 0.6) {
        kind = 'no-email';
        email = undefined;
      }
      if (r() < 0.08 && kind !== 'no-email') email = undefined;
      // Employee numbers: some sources have none; some number people their own way (contractors).
      employee =
        r() < 0.6 ? (r() < spec.idDiffer ? `C${String(Math.floor(r() * 90000) + 10000)}` : p.employee) : undefined;
      department =
        r() < 0.8
          ? r() < spec.deptChange
            ? DEPARTMENTS[Math.floor(r() * DEPARTMENTS.length)]!
            : p.department
          : undefined;
    }
    out.accounts.push({
      id,
      attributes: {
        displayName: display(first, last, middle),
        firstName: cap(first),
        lastName: cap(last),
        ...(email ? { email } : {}),
        ...(employee ? { employeeNumber: employee } : {}),
        ...(department ? { department } : {}),
        randomCode: code(),
      },
    });
    out.person.set(id, p.id);
    out.kind.set(id, kind);
    accountsOf.push({ p });
  }
  return out;
}
