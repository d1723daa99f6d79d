/**
 * Seeded generator of realistic people for the matching benchmark: common English first names
 * (with nicknames), a skewed common-surname list plus synthetic surnames, e-mail and user name,
 * and accounts that are perturbed copies of identities or of each other (with a truth list).
 */
import type { MatchRecord, MatchingSettings } from '../src/core/matching';

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The first index whose running total reaches `x`: a weighted pick when `x` is uniform up to the last total. */
export function cumulativeIndex(cumulative: readonly number[], x: number): number {
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const FIRST =
  `james robert john michael william david richard joseph thomas charles christopher daniel matthew anthony mark
donald steven paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey ryan jacob gary nicholas eric
jonathan stephen larry justin scott brandon benjamin samuel gregory alexander frank patrick raymond jack dennis jerry tyler
aaron jose adam nathan henry douglas zachary peter kyle noah ethan jeremy walter christian keith roger terry austin sean
gerald carl harold dylan arthur lawrence jordan jesse bryan billy bruce gabriel joe logan alan juan albert willie elijah
mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty sandra margaret ashley kimberly
emily donna michelle carol amanda melissa deborah stephanie dorothy rebecca sharon laura cynthia amy kathleen angela shirley
brenda emma anna pamela nicole samantha katherine christine helen debra rachel carolyn janet maria catherine heather diane
olivia julie joyce victoria ruth virginia lauren kelly christina joan evelyn judith andrea hannah megan cheryl jacqueline
martha madison teresa gloria sara janice ann kathryn abigail sophia frances jean alice judy isabella julia grace amber denise
josé maría zoë chloé renée françois søren björn ángel müller`.split(/\s+/);

const NICK: Record<string, string[]> = {
  robert: ['bob', 'rob', 'bobby'],
  william: ['bill', 'will', 'billy'],
  richard: ['rick', 'dick'],
  michael: ['mike'],
  james: ['jim', 'jimmy'],
  joseph: ['joe'],
  thomas: ['tom'],
  charles: ['charlie', 'chuck'],
  christopher: ['chris'],
  daniel: ['dan', 'danny'],
  matthew: ['matt'],
  anthony: ['tony'],
  steven: ['steve'],
  stephen: ['steve'],
  andrew: ['andy'],
  elizabeth: ['liz', 'beth'],
  margaret: ['maggie', 'peggy'],
  katherine: ['kate', 'kathy'],
  jennifer: ['jen'],
  patricia: ['pat', 'trish'],
  rebecca: ['becky'],
  samantha: ['sam'],
  edward: ['ed', 'ted'],
  benjamin: ['ben'],
  alexander: ['alex'],
  nicholas: ['nick'],
  jonathan: ['jon'],
  timothy: ['tim'],
  kenneth: ['ken'],
  susan: ['sue'],
};

const COMMON_LAST =
  `smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson
anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis robinson walker
young allen king wright scott torres nguyen hill flores green adams nelson baker hall rivera campbell mitchell carter roberts
gomez phillips evans turner diaz parker cruz edwards collins reyes stewart morris morales murphy cook rogers gutierrez ortiz
morgan cooper peterson bailey reed kelly howard ramos kim cox ward richardson watson brooks chavez wood james bennett gray
mendoza ruiz hughes price alvarez castillo sanders patel myers long ross foster jimenez powell jenkins perry russell sullivan
bell coleman butler henderson barnes gonzales fisher vasquez simmons romero jordan patterson alexander hamilton graham
reynolds griffin wallace moreno west cole hayes bryant herrera gibson ellis tran medina aguilar stevens murray ford castro
marshall owens harrison fernandez mcdonald woods washington kennedy wells vargas henry chen freeman webb tucker guzman
burns crawford olson simpson porter hunter gordon mendez silva shaw snyder mason dixon muñoz hunt hicks holmes palmer
wagner black robertson boyd rose stone salazar fox warren mills meyer rice schmidt garza daniels ferguson nichols stephens
soto weaver ryan gardner payne grant dunn kelley spencer hawkins arnold pierce vazquez hansen peters santos hart bradley
knight elliott cunningham duncan armstrong hudson carroll lane riley andrews alvarado ray delgado berry perkins hoffman
johnston matthews peña richards willis carpenter lawrence sandoval guerrero george chapman rios estrada ortega watkins
greene núñez wheeler valdez harper burke larson santiago maldonado morrison franklin carlson austin dominguez carr lawson
jacobs obrien lynch singh vega bishop montgomery oliver jensen harvey williamson gilbert dean sims espinoza howell li wong
reid hanson le mccoy garrett burton fuller wang weber welch rojas lucas marquez fields park yang little banks padilla day
walsh bowman schultz luna fowler mejia davidson acosta brewer may holland juarez newman pearson curtis cortez douglas
schneider joseph barrett navarro figueroa keller ávila wade molina stanley hopkins campos barnett bates chambers caldwell
beck lambert miranda byrd craig ayala lowe frazier powers neal leonard gregory carrillo sutton fleming rhodes shelton
schwartz norris jennings watts duran walters cohen mcdaniel moran parks steele vaughn becker holt deleon barker terry hale
leon hail benson haynes horton miles lyons pham graves bush thornton wolfe warner cabrera mckinney mann zimmerman dawson
lara fletcher page mccarthy love robles cervantes solis erickson reeves chang klein salinas fuentes baldwin daniel simon
velasquez hardy higgins aguirre lin cummings chandler sharp barber bowen ochoa dennis robbins liu ramsey francis griffith
paul blair oconnor cardenas pacheco cross calderon quinn moss swanson chan rivas khan rodgers serrano fitzgerald rosales
stevenson christensen manning gill curry mclaughlin harmon mcgee gross doyle garner newton burgess reese walton blake
trujillo adkins brady goodman roman webster goodwin fischer huang potter delacruz montoya todd wu hines mullins castaneda
malone cannon tate mack sherman hubbard hodges zhang guerra wolf valencia saunders franco rowe gallagher farmer hammond
hampton townsend ingram wise gallegos clarke barton schroeder maxwell waters logan camacho strickland norman person
colón parsons frank harrington glover osborne buchanan casey floyd patton ibarra ball tyler suarez bowers orozco salas
cobb gibbs andrade bauer conner moody escobar mcguire lloyd mueller hartman french kramer mcbride pope lindsey velazquez
norton mccormick sparks flynn yates hogan marsh macias villanueva zamora pratt stokes owen ballard lang brock villarreal
charles drake barrera cain patrick piña blackwell lam`.split(/\s+/);

const SYL = [
  'ka',
  'lo',
  'ber',
  'vin',
  'dor',
  'sel',
  'ma',
  'rin',
  'tov',
  'ash',
  'wen',
  'gri',
  'hol',
  'mun',
  'dra',
  'pel',
  'stro',
  'qui',
  'zan',
  'fen',
  'lur',
  'bek',
  'nor',
  'tis',
  'gal',
  'rho',
  'vey',
  'cor',
  'lim',
  'sax',
  'ort',
  'ule',
  'yar',
  'ped',
  'kov',
  'ich',
  'sky',
  'berg',
  'man',
  'ton',
  'ley',
  'ford',
  'wick',
  'hurst',
  'stein',
  'ez',
  'ini',
  'elli',
];

const DOMAINS = ['acme.com', 'example.org', 'corp.example', 'mail.test'];

/** bench:matching's main configuration: surname and name mandatory, e-mail and user name as evidence. */
export const MAIN_SETTINGS: MatchingSettings = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
    { attribute: 'userName', algorithm: 'levenshtein', threshold: 80, mandatory: false },
  ],
  reviewTopK: 10,
};

/** No mandatory attribute: candidates are the union of every attribute's index. */
export const NO_MANDATORY_SETTINGS: MatchingSettings = {
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 85, mandatory: false },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 95, mandatory: false },
    { attribute: 'userName', algorithm: 'levenshtein', threshold: 90, mandatory: false },
  ],
  reviewTopK: 10,
};

export interface Person {
  first: string;
  middle: string;
  last: string;
}

export interface Generated {
  identities: MatchRecord[];
  accounts: MatchRecord[];
  /** Seeded true pairs: account id -> the id it duplicates (identity or earlier account). */
  truth: Map<string, string>;
}

const ascii = (s: string): string => s.normalize('NFD').replace(/\p{M}/gu, '');

export function generate(seed: number, identities: number, accounts: number): Generated {
  const rand = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  // Surnames: 35 % from the common list with a mild Zipf skew (top ~1 %), the rest synthetic.
  const weights = COMMON_LAST.map((_, i) => 1 / (i + 25));
  const totalW = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  weights.reduce((acc, w) => (cumulative.push(acc + w / totalW), acc + w / totalW), 0);
  const lastName = (): string => {
    if (rand() < 0.35) return COMMON_LAST[cumulativeIndex(cumulative, rand())]!;
    let s = '';
    for (let i = 2 + Math.floor(rand() * 2); i > 0; i--) s += pick(SYL);
    return s;
  };
  const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
  const typo = (s: string): string => {
    if (s.length < 4) return s;
    const i = 1 + Math.floor(rand() * (s.length - 2));
    const op = Math.floor(rand() * 3);
    const c = 'aeioulnrst'[Math.floor(rand() * 10)]!;
    if (op === 0) return s.slice(0, i) + c + s.slice(i + 1);
    if (op === 1) return s.slice(0, i) + s.slice(i + 1);
    return s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2);
  };
  const record = (id: string, p: Person, n: number, domain: string): MatchRecord => {
    const f = ascii(p.first);
    const l = ascii(p.last).replace(/[^a-z]/g, '');
    return {
      id,
      attributes: {
        displayName: `${cap(p.first)}${p.middle ? ` ${p.middle.toUpperCase()}.` : ''} ${cap(p.last)}`,
        lastName: cap(p.last),
        email: `${f}.${l}${n > 0 ? n : ''}@${domain}`,
        userName: `${f.charAt(0)}${l}${n > 0 ? n : ''}`,
      },
    };
  };
  const people: Person[] = [];
  const ids: MatchRecord[] = [];
  for (let i = 0; i < identities; i++) {
    const p = {
      first: pick(FIRST),
      middle: rand() < 0.15 ? pick('abcdefghjklmnprstw'.split('')) : '',
      last: lastName(),
    };
    people.push(p);
    ids.push(record(`i${i}`, p, rand() < 0.3 ? Math.floor(rand() * 99) : 0, pick(DOMAINS)));
  }
  const accs: MatchRecord[] = [];
  const truth = new Map<string, string>();
  const accountPeople: Person[] = [];
  for (let j = 0; j < accounts; j++) {
    const r = rand();
    let p: Person;
    let source: string | undefined;
    if (r < 0.3 && identities > 0) {
      const k = Math.floor(rand() * identities);
      p = { ...people[k]! };
      source = `i${k}`;
    } else if (r < 0.35 && j > 0) {
      const k = Math.floor(rand() * j);
      p = { ...accountPeople[k]! };
      source = `a${k}`;
    } else {
      p = { first: pick(FIRST), middle: rand() < 0.15 ? pick('abcdefghjklmnprstw'.split('')) : '', last: lastName() };
    }
    accountPeople.push(p);
    let shown = p;
    if (source) {
      truth.set(`a${j}`, source);
      const q = rand();
      if (q < 0.25 && NICK[p.first]) shown = { ...p, first: pick(NICK[p.first]!) };
      else if (q < 0.45) shown = { ...p, first: typo(p.first) };
      else if (q < 0.55) shown = { ...p, last: typo(p.last) };
      else if (q < 0.65) shown = { ...p, middle: p.middle ? '' : 'j' };
      else if (q < 0.7) shown = { ...p, first: ascii(p.first), last: ascii(p.last) };
    }
    const rec = record(`a${j}`, shown, rand() < 0.3 ? Math.floor(rand() * 99) : 0, pick(DOMAINS));
    if (source && rand() < 0.1) rec.attributes.displayName = `${cap(shown.last)}, ${cap(shown.first)}`;
    accs.push(rec);
  }
  return { identities: ids, accounts: accs, truth };
}
