/**
 * Labelled data for bench:quality. Two sets:
 * - "namesakes": identities and accounts of one organisation with zipf-like given-name and surname
 *   frequencies (so namesakes exist), e-mail built from the names (a namesake gets name2@),
 *   employee numbers only in some sources, and accounts that are varied copies (nickname, typo,
 *   missing accents, initial, changed or hyphenated surname, new e-mail domain), same-run
 *   duplicates, plainly new people and namesakes who are different people;
 * - "clean": person records (name, birth date, address, identifier) with typos, swaps and missing values.
 * Every account carries the person id (truth) and the kind of variation applied.
 */
import type { MatchRecord } from '../src/core/matching';
import { cumulativeIndex, rng } from './matching-data';

const GIVEN = `james mary robert patricia john jennifer michael linda william elizabeth david barbara richard susan
joseph jessica thomas sarah charles karen christopher lisa daniel nancy matthew betty anthony margaret mark sandra donald
ashley steven kimberly paul emily andrew donna joshua michelle kenneth carol kevin amanda brian melissa george deborah
timothy stephanie ronald rebecca edward sharon jason laura jeffrey cynthia ryan kathleen jacob amy gary angela nicholas
shirley eric anna jonathan brenda stephen pamela larry emma justin nicole scott helen brandon samantha benjamin katherine
samuel christine gregory debra alexander rachel frank carolyn patrick janet raymond catherine jack maria dennis heather
jerry diane tyler ruth aaron julie jose olivia adam joyce nathan virginia henry victoria douglas kelly zachary lauren peter
christina kyle joan ethan evelyn walter judith noah megan jeremy andrea christian cheryl keith hannah roger jacqueline
terry martha gerald gloria harold teresa sean ann austin sara carl madison arthur frances lawrence kathryn dylan janice
josé zoë chloé renée françois søren björn ángel héloïse mélanie jérôme`.split(/\s+/);

const NICK: Record<string, string> = {
  james: 'jim',
  robert: 'bob',
  john: 'jack',
  michael: 'mike',
  william: 'bill',
  elizabeth: 'liz',
  david: 'dave',
  richard: 'rick',
  joseph: 'joe',
  thomas: 'tom',
  charles: 'chuck',
  christopher: 'chris',
  daniel: 'dan',
  matthew: 'matt',
  anthony: 'tony',
  margaret: 'peggy',
  steven: 'steve',
  andrew: 'andy',
  kenneth: 'ken',
  michelle: 'shelly',
  amanda: 'mandy',
  deborah: 'debbie',
  timothy: 'tim',
  rebecca: 'becky',
  edward: 'ted',
  jennifer: 'jen',
  patricia: 'trish',
  katherine: 'kate',
  samantha: 'sam',
  benjamin: 'ben',
  alexander: 'alex',
  nicholas: 'nick',
  jonathan: 'jon',
  gregory: 'greg',
  susan: 'sue',
  victoria: 'vicky',
  christina: 'tina',
  pamela: 'pam',
  zachary: 'zack',
  lawrence: 'larry',
  frances: 'fran',
  gerald: 'gerry',
  douglas: 'doug',
  raymond: 'ray',
  barbara: 'barb',
  cynthia: 'cindy',
};

const SURNAMES = `smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez
wilson anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis robinson
walker young allen king wright scott torres nguyen hill flores green adams nelson baker hall rivera campbell mitchell
carter roberts gomez phillips evans turner diaz parker cruz edwards collins reyes stewart morris morales murphy cook
rogers gutierrez ortiz morgan cooper peterson bailey reed kelly howard ramos kim cox ward richardson watson brooks chavez
wood bennett gray mendoza ruiz hughes price alvarez castillo sanders patel myers long ross foster jimenez powell jenkins
perry russell sullivan bell coleman butler henderson barnes fisher vasquez simmons romero patterson hamilton graham
reynolds griffin wallace moreno west cole hayes bryant herrera gibson ellis tran medina aguilar stevens murray ford castro
marshall owens harrison fernandez mcdonald woods washington kennedy wells vargas chen freeman webb tucker guzman burns
crawford olson simpson porter hunter gordon mendez silva shaw snyder mason dixon muñoz hunt hicks holmes palmer wagner
black robertson boyd rose stone salazar fox warren mills meyer rice schmidt garza daniels ferguson nichols stephens soto
weaver ryan gardner payne grant dunn kelley spencer hawkins arnold pierce hansen peters santos hart bradley knight elliott
cunningham duncan armstrong hudson carroll lane riley andrews alvarado ray delgado berry perkins hoffman johnston
matthews peña richards willis carpenter lawrence sandoval guerrero chapman rios estrada ortega watkins greene núñez
wheeler valdez harper burke larson santiago maldonado morrison franklin carlson austin dominguez carr lawson jacobs
obrien lynch singh vega bishop montgomery oliver jensen harvey williamson gilbert dean sims espinoza howell li wong reid
hanson le mccoy garrett burton fuller wang weber welch rojas lucas marquez fields park yang little banks padilla day
walsh bowman schultz luna fowler mejia davidson acosta brewer may holland juarez newman pearson curtis cortez douglas
schneider barrett navarro figueroa keller ávila wade molina stanley hopkins campos barnett bates chambers caldwell beck
lambert miranda byrd craig ayala lowe frazier powers neal gregory carrillo sutton fleming rhodes shelton schwartz norris
jennings watts duran walters cohen mcdaniel moran parks steele vaughn becker holt deleon barker terry hale leon benson
haynes horton miles lyons pham graves bush thornton wolfe warner cabrera mckinney mann zimmerman dawson lara fletcher page
mccarthy love robles cervantes solis erickson reeves chang klein salinas fuentes baldwin simon velasquez hardy higgins
aguirre lin cummings chandler sharp barber bowen ochoa robbins liu ramsey griffith blair oconnor cardenas pacheco cross
calderon quinn moss swanson chan rivas khan rodgers serrano fitzgerald rosales stevenson christensen manning gill curry
mclaughlin harmon mcgee gross doyle garner newton burgess reese walton blake trujillo adkins brady goodman roman webster
goodwin fischer huang potter delacruz montoya todd wu hines mullins castaneda malone cannon tate mack sherman hubbard
hodges zhang guerra wolf valencia saunders franco rowe gallagher farmer hammond hampton townsend ingram wise gallegos
clarke barton schroeder maxwell waters logan camacho strickland norman parsons frank harrington glover osborne buchanan
casey floyd patton ibarra ball tyler suarez bowers orozco salas cobb gibbs andrade bauer conner moody escobar mcguire`.split(
  /\s+/,
);

const SYL =
  `ka lo ber vin dor sel ma rin tov ash wen gri hol mun dra pel stro qui zan fen lur bek nor tis gal rho vey cor
lim sax ort ule yar ped kov ich sky berg man ton lan ova ez ski ham`.split(/\s+/);

/** Zipf-like sampler over a list: rank r has weight 1 / (r + 1)^s. */
function zipf<T>(items: readonly T[], s: number): (r: () => number) => T {
  const cum: number[] = [];
  let total = 0;
  items.forEach((_, i) => cum.push((total += 1 / (i + 1) ** s)));
  return (r) => items[cumulativeIndex(cum, r() * total)]!;
}

function stripAccents(s: string): string {
  return s.normalize('NFD').replace(/\p{M}+/gu, '');
}

function cap(s: string): string {
  return s
    .split(/([ -])/)
    .map((w) => (w.length > 0 ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join('');
}

function typo(s: string, r: () => number): string {
  const letters = 'bcdfghklmnprstvz';
  const i = 1 + Math.floor(r() * Math.max(s.length - 1, 1));
  const kind = Math.floor(r() * 3);
  if (kind === 0) return s.slice(0, i) + s.slice(i + 1); // deletion
  const c = letters[Math.floor(r() * letters.length)]!;
  if (kind === 1) return s.slice(0, i) + c + s.slice(i + 1); // substitution
  return s.slice(0, i) + c + s.slice(i); // insertion
}

export interface Labelled {
  name: string;
  identities: MatchRecord[];
  accounts: MatchRecord[];
  /** Record id -> person id. */
  person: Map<string, string>;
  /** Account id -> variation kind ('new', 'namesake' for different people). */
  kind: Map<string, string>;
}

export const VARIATIONS = [
  'exact',
  'nickname',
  'typo',
  'accents',
  'initial',
  'surname-changed',
  'hyphenated',
  'new-domain',
  'same-run',
] as const;

interface Person {
  id: string;
  first: string;
  last: string;
  email: string;
  employee: string;
}

/** The namesake set: `identities` people with an identity, `accounts` new records. */
export function namesakeSet(seed: number, identities: number, accounts: number): Labelled {
  const r = rng(seed);
  const synthetic: string[] = [];
  for (let i = 0; i < 4000; i++)
    synthetic.push(SYL[Math.floor(r() * SYL.length)]! + SYL[Math.floor(r() * SYL.length)]!);
  const surname = zipf([...SURNAMES, ...synthetic], 0.9);
  const given = zipf(GIVEN, 0.7);
  const usedLocal = new Map<string, number>();
  let pid = 0;
  const newPerson = (first = given(r), last = surname(r)): Person => {
    const base = `${stripAccents(first)}.${stripAccents(last)}`.replace(/[^a-z.]/g, '');
    const n = (usedLocal.get(base) ?? 0) + 1;
    usedLocal.set(base, n);
    const id = `p${pid++}`;
    return {
      id,
      first,
      last,
      email: `${base}${n > 1 ? n : ''}@acme.com`,
      employee: `E${String(100000 + pid * 7).padStart(7, '0')}`,
    };
  };
  const out: Labelled = { name: 'namesakes', identities: [], accounts: [], person: new Map(), kind: new Map() };
  const people: Person[] = [];
  for (let i = 0; i < identities; i++) {
    const p = newPerson();
    people.push(p);
    const id = `id-${i}`;
    out.identities.push({
      id,
      attributes: {
        displayName: cap(`${p.first} ${p.last}`),
        lastName: cap(p.last),
        email: p.email,
        ...(r() < 0.8 ? { employeeNumber: p.employee } : {}),
      },
    });
    out.person.set(id, p.id);
  }
  const earlier: Array<{ p: Person; attrs: Record<string, unknown> }> = [];
  for (let a = 0; a < accounts; a++) {
    const id = `acc-${a}`;
    const x = r();
    let p: Person;
    let kind: string;
    let first: string;
    let last: string;
    let email: string;
    if (x < 0.2) {
      p = newPerson();
      kind = 'new';
      first = p.first;
      last = p.last;
      email = p.email;
    } else if (x < 0.3) {
      // A different person with an identity holder's exact name.
      const twin = people[Math.floor(r() * people.length)]!;
      p = newPerson(twin.first, twin.last);
      kind = 'namesake';
      first = p.first;
      last = p.last;
      email = r() < 0.5 ? p.email : p.email.replace('@acme.com', '@partner.org');
    } else if (x < 0.35 && earlier.length > 0) {
      const e = earlier[Math.floor(r() * earlier.length)]!;
      out.accounts.push({ id, attributes: { ...e.attrs } });
      out.person.set(id, e.p.id);
      out.kind.set(id, 'same-run');
      continue;
    } else {
      p = people[Math.floor(r() * people.length)]!;
      first = p.first;
      last = p.last;
      email = p.email;
      const kinds = VARIATIONS.filter((k) => k !== 'same-run');
      kind = kinds[Math.floor(r() * kinds.length)]!;
      switch (kind) {
        case 'nickname': {
          const nick = NICK[first];
          if (nick) first = nick;
          else kind = 'exact';
          break;
        }
        case 'typo':
          if (r() < 0.5) last = typo(last, r);
          else first = typo(first, r);
          break;
        case 'accents':
          first = stripAccents(first);
          last = stripAccents(last);
          break;
        case 'initial':
          first = first[0]!;
          break;
        case 'surname-changed': {
          last = surname(r);
          // A new address from the new name, unique like every address of the organisation.
          const base = `${stripAccents(first)}.${stripAccents(last)}`.replace(/[^a-z.]/g, '');
          const n = (usedLocal.get(base) ?? 0) + 1;
          usedLocal.set(base, n);
          email = `${base}${n > 1 ? n : ''}@acme.com`;
          break;
        }
        case 'hyphenated':
          last = `${last}-${surname(r)}`;
          break;
        case 'new-domain':
          email = email.replace('@acme.com', r() < 0.5 ? '@acme-group.com' : '@contractors.acme.net');
          break;
      }
    }
    const attrs: Record<string, unknown> = {
      displayName: cap(`${first} ${last}`),
      lastName: cap(last),
      ...(r() < 0.9 ? { email } : {}),
      // Employee numbers only in some sources.
      ...(r() < 0.5 ? { employeeNumber: p.employee } : {}),
    };
    out.accounts.push({ id, attributes: attrs });
    out.person.set(id, p.id);
    out.kind.set(id, kind);
    earlier.push({ p, attrs });
  }
  return out;
}

const STREETS = `main oak pine maple cedar elm view lake hill park washington church high mill station school north
south west river spring bridge king queen victoria green`.split(/\s+/);
const TOWNS = `springfield riverton lakeside fairview greenville bristol madison clinton salem georgetown franklin
arlington ashland burlington dover hudson`.split(/\s+/);

/** The clean set: person records (FEBRL-like) with typos, swaps and missing values. */
export function cleanSet(seed: number, originals: number, duplicates: number, fresh: number): Labelled {
  const r = rng(seed);
  const surname = zipf(SURNAMES, 0.6);
  const given = zipf(GIVEN, 0.5);
  const out: Labelled = { name: 'clean', identities: [], accounts: [], person: new Map(), kind: new Map() };
  const pad = (n: number): string => String(n).padStart(2, '0');
  const person = (i: number): Record<string, string> => {
    const y = 1940 + Math.floor(r() * 65);
    return {
      firstName: cap(given(r)),
      lastName: cap(surname(r)),
      birthDate: `${y}-${pad(1 + Math.floor(r() * 12))}-${pad(1 + Math.floor(r() * 28))}`,
      address: `${1 + Math.floor(r() * 999)} ${cap(STREETS[Math.floor(r() * STREETS.length)]!)} Street, ${cap(TOWNS[Math.floor(r() * TOWNS.length)]!)}`,
      ssn: String(100000000 + i * 7919 + Math.floor(r() * 7000)),
    };
  };
  const withName = (p: Record<string, string>): Record<string, string> => ({
    ...p,
    fullName: `${p.firstName} ${p.lastName}`,
  });
  const base: Record<string, string>[] = [];
  for (let i = 0; i < originals; i++) {
    const p = person(i);
    base.push(p);
    out.identities.push({ id: `o-${i}`, attributes: withName(p) });
    out.person.set(`o-${i}`, `c${i}`);
  }
  const mods = ['typo', 'swap-names', 'swap-date', 'date-digit', 'missing', 'address'] as const;
  for (let d = 0; d < duplicates; d++) {
    const i = Math.floor(r() * originals);
    const p = { ...base[i]! };
    const applied: string[] = [];
    const count = 1 + Math.floor(r() * 3);
    for (let k = 0; k < count; k++) {
      const mod = mods[Math.floor(r() * mods.length)]!;
      applied.push(mod);
      switch (mod) {
        case 'typo':
          if (r() < 0.5) p.lastName = cap(typo(p.lastName!.toLowerCase(), r));
          else p.firstName = cap(typo(p.firstName!.toLowerCase(), r));
          break;
        case 'swap-names':
          [p.firstName, p.lastName] = [p.lastName!, p.firstName!];
          break;
        case 'swap-date': {
          if (p.birthDate === undefined) break;
          const [y, m, dd] = p.birthDate.split('-');
          if (Number(dd) <= 12) p.birthDate = `${y}-${dd}-${m}`;
          break;
        }
        case 'date-digit': {
          const b = p.birthDate;
          if (b === undefined) break;
          const at = [2, 3, 6, 9][Math.floor(r() * 4)]!;
          p.birthDate = b.slice(0, at) + String((Number(b[at]) + 1) % 10) + b.slice(at + 1);
          break;
        }
        case 'missing': {
          const field = (['ssn', 'address', 'birthDate'] as const)[Math.floor(r() * 3)]!;
          delete p[field];
          break;
        }
        case 'address':
          if (p.address !== undefined) p.address = typo(p.address.toLowerCase(), r);
          break;
      }
    }
    const id = `d-${d}`;
    out.accounts.push({ id, attributes: withName(p) });
    out.person.set(id, `c${i}`);
    out.kind.set(id, applied[0]!);
  }
  for (let f = 0; f < fresh; f++) {
    const id = `f-${f}`;
    out.accounts.push({ id, attributes: withName(person(originals + f)) });
    out.person.set(id, `f${f}`);
    out.kind.set(id, 'new');
  }
  // Interleave duplicates and new people (a stable shuffle).
  const order = out.accounts.map((a) => [r(), a] as const).sort((x, y) => x[0] - y[0]);
  out.accounts = order.map((x) => x[1]);
  return out;
}

/**
 * True pairs (account id, candidate id): each account with every earlier record of the same person,
 * its identities first, then its earlier accounts, in their order.
 */
export function truthPairs(set: Labelled): Array<[account: string, candidate: string]> {
  const seen = new Map<string, string[]>();
  for (const r of set.identities) {
    const p = set.person.get(r.id)!;
    seen.set(p, [...(seen.get(p) ?? []), r.id]);
  }
  const pairs: Array<[string, string]> = [];
  for (const a of set.accounts) {
    const p = set.person.get(a.id)!;
    for (const other of seen.get(p) ?? []) pairs.push([a.id, other]);
    seen.set(p, [...(seen.get(p) ?? []), a.id]);
  }
  return pairs;
}
