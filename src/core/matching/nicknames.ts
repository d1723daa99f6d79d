/**
 * Common English given names and their nicknames. Each line is one equivalence group (formal
 * name first); a name may appear in several groups (e.g. "bert" for Albert and Robert).
 */
const GROUPS = `
abigail abby abbie gail
albert al bert bertie
alexander alex alec sandy xander lex
alexandra alex alexa sandra sandy lexi
alfred al alf fred freddie
andrew andy drew
angela angie
anthony tony ant
arthur art artie
barbara barb barbie babs
benjamin ben benny benji
bernard bernie
catherine cathy cath kate katie kathy cat
katherine kathy kate katie kat kit
christina chris tina christy
christine chris tina chrissy
christopher chris kit topher
charles charlie chuck chas chaz
charlotte charlie lottie
daniel dan danny
david dave davy
deborah debbie deb debra
donald don donnie
dorothy dot dotty dottie
douglas doug
edward ed eddie ted teddy ned
elizabeth liz lizzie beth betty betsy eliza lisa libby bess
eleanor ellie nell nora
emily em emmy millie
frances fran frannie
francis frank frankie
frederick fred freddie fritz
gabriel gabe
gerald gerry jerry
gregory greg
harold hal harry
henry hank harry hal
isabella bella izzy isabel
jacob jake jay
james jim jimmy jamie
janet jan jenny
jennifer jen jenny jenn
jessica jess jessie
john jack johnny jon
jonathan jon jonny nathan
joseph joe joey jos
joshua josh
judith judy jude
katrina kat trina
kenneth ken kenny
lawrence larry laurie
leonard leo len lenny
louis lou louie
margaret maggie meg peg peggy marge margie greta daisy
matthew matt matty
michael mike mikey mick mickey
nancy nan
nathaniel nat nate nathan
nicholas nick nicky nico
pamela pam
patricia pat patty trish tricia
patrick pat paddy rick
peter pete
philip phil pip
rebecca becky becca
richard rick ricky dick rich richie
robert rob bob bobby robbie bert
ronald ron ronnie
samantha sam sammy
samuel sam sammy
stephen steve stevie steven
steven steve stevie stephen
susan sue susie suzy
theodore ted teddy theo
thomas tom tommy
timothy tim timmy
victoria vicky tori vic
vincent vince vinny
virginia ginny ginger
walter walt wally
william will bill billy willy liam
zachary zach zack
`;

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

/** Number of (name, nickname) pairs in the table, for the README and tests. */
export function nicknamePairCount(): number {
  return GROUPS.trim()
    .split('\n')
    .reduce((n, line) => n + line.trim().split(/\s+/).length - 1, 0);
}
