/**
 * Name frequency tables for bench:quality's HR-like sets, written from published frequency figures
 * (rounded, from memory of the public sources: US Census 2010 surnames per 100,000, the SSA's given
 * names, national surname shares for Vietnam, China, India, Germany, Sweden, Nigeria, Spain/Mexico),
 * not from the model's assumptions. What matters to matching is their shape: a few names held by
 * very many people (Nguyen ~38 % of Vietnamese, Wang/Li/Zhang ~7 % each of Chinese) and long tails.
 * Each table is "name:weight" (weight in any unit, relative within the table); a culture's tail of
 * rare surnames is built from its own syllables.
 */

export interface Culture {
  name: string;
  surnames: string;
  given: string;
  /** Syllables for the culture's rare surnames (the tail beyond the table). */
  tail: [string, string];
  /** Share of the culture's people whose surname is in the tail. */
  tailShare: number;
  /** Surnames of two parts ("garcia lopez"): share of people. */
  doubleSurname?: number;
}

export const CULTURES: Record<string, Culture> = {
  anglo: {
    name: 'anglo',
    surnames: `smith:828 johnson:655 williams:550 brown:487 jones:483 miller:395 davis:382 wilson:263 anderson:253
      taylor:228 thomas:226 moore:212 martin:208 jackson:207 thompson:207 white:206 harris:190 clark:176 lewis:171
      robinson:169 walker:164 young:149 allen:148 king:147 wright:146 scott:137 hill:134 green:129 adams:126
      baker:125 nelson:123 carter:122 mitchell:119 roberts:118 turner:114 phillips:112 campbell:108 parker:106
      evans:104 edwards:101 collins:98 stewart:96 morris:90 murphy:87 cook:84 rogers:84 morgan:80 cooper:79
      peterson:79 bailey:77 reed:76 kelly:74 howard:73 cox:68 ward:68 richardson:67 watson:66 brooks:65 wood:63
      bennett:63 gray:62 hughes:59 price:58 sanders:57 myers:56 long:55 ross:55 foster:55 powell:53 jenkins:53
      perry:52 russell:51 sullivan:51 bell:50 coleman:50 butler:49 henderson:49 barnes:48 fisher:46 simmons:45
      graham:44 hamilton:44 wallace:42 cole:41 west:41 hayes:40 ellis:39 murray:38 ford:38 marshall:37
      owens:37 harrison:36 mcdonald:36 kennedy:35 wells:35 o'brien:34 burns:33 gordon:33 shaw:33 hunt:32`,
    given: `james:3.3 john:3.2 robert:3.1 michael:2.6 william:2.5 david:2.4 richard:1.6 joseph:1.3 thomas:1.1
      charles:1.1 christopher:1.0 daniel:1.0 matthew:0.8 anthony:0.7 mark:0.7 donald:0.7 steven:0.6 paul:0.6
      andrew:0.6 joshua:0.6 kenneth:0.5 kevin:0.5 brian:0.5 george:0.5 edward:0.4 ronald:0.4 timothy:0.4
      jason:0.4 jeffrey:0.4 ryan:0.4 jacob:0.4 gary:0.4 nicholas:0.4 eric:0.4 jonathan:0.3 stephen:0.3 larry:0.3
      justin:0.3 scott:0.3 brandon:0.3 benjamin:0.3 samuel:0.3 gregory:0.3 alexander:0.3 patrick:0.3 frank:0.3
      mary:2.6 patricia:1.1 jennifer:1.1 linda:1.0 elizabeth:1.0 barbara:1.0 susan:0.9 jessica:0.8 sarah:0.8
      karen:0.8 lisa:0.7 nancy:0.7 betty:0.7 margaret:0.6 sandra:0.6 ashley:0.6 kimberly:0.6 emily:0.5 donna:0.5
      michelle:0.5 carol:0.5 amanda:0.5 dorothy:0.5 melissa:0.5 deborah:0.5 stephanie:0.5 rebecca:0.4 sharon:0.4
      laura:0.4 cynthia:0.4 kathleen:0.4 amy:0.4 angela:0.4 shirley:0.4 anna:0.4 brenda:0.3 pamela:0.3 emma:0.3
      nicole:0.3 helen:0.3 samantha:0.3 katherine:0.3 christine:0.3 debra:0.3 rachel:0.3 catherine:0.3`,
    tail: [
      'ash brad burn chad craw dun fair gold hart holl kirk lang mar mil nor pen rad stan thorn wes',
      'by den field ford ham ington ley low man more ridge son ton well wick wood worth',
    ],
    tailShare: 0.45,
  },
  hispanic: {
    name: 'hispanic',
    surnames: `garcia:1100 rodriguez:930 martinez:880 hernandez:830 lopez:810 gonzalez:780 perez:540 sanchez:520
      ramirez:500 torres:420 flores:400 rivera:380 gomez:360 diaz:350 reyes:290 morales:280 cruz:270 ortiz:260
      gutierrez:250 chavez:240 ramos:240 ruiz:230 alvarez:230 mendoza:230 castillo:220 jimenez:210 moreno:210
      romero:200 herrera:190 medina:180 aguilar:180 vargas:170 castro:160 guzman:160 fernandez:160 muñoz:150
      mendez:150 salazar:140 soto:140 delgado:130 peña:120 rios:120 alvarado:120 sandoval:110 contreras:110
      valdez:110 guerrero:100 ortega:100 estrada:100 núñez:90`,
    given: `josé:2.5 juan:2.0 luis:1.6 carlos:1.6 jorge:1.2 miguel:1.2 francisco:1.0 antonio:1.0 jesús:0.9
      manuel:0.8 pedro:0.7 alejandro:0.7 ricardo:0.6 fernando:0.6 javier:0.6 raúl:0.5 andrés:0.4 diego:0.4
      maría:3.0 guadalupe:1.0 rosa:0.9 ana:0.9 carmen:0.8 laura:0.7 sofía:0.6 lucía:0.6 isabel:0.6 elena:0.5
      patricia:0.5 gabriela:0.5 verónica:0.4 alejandra:0.4 mónica:0.4 daniela:0.4 beatriz:0.3 silvia:0.3`,
    tail: [
      'al bar cal cas es gal lar mal mon nav pal ser val var zam bel cor tor vil mir',
      'ado anco eda ejo era ero ez illa ino ona oza uela ares iles ueros',
    ],
    tailShare: 0.25,
    doubleSurname: 0.2,
  },
  vietnamese: {
    name: 'vietnamese',
    surnames: `nguyễn:380 trần:110 lê:95 phạm:70 hoàng:51 huỳnh:50 phan:45 vũ:39 võ:30 đặng:21 bùi:20 đỗ:14
      hồ:13 ngô:13 dương:10 lý:5`,
    given: `anh:2 minh:2 thanh:1.5 linh:1.5 huong:1.2 hung:1.2 tuan:1.2 duc:1 hoa:1 lan:1 mai:1 nam:1 phuong:1
      quang:0.8 thu:0.8 trang:0.8 hai:0.8 long:0.7 son:0.7 hieu:0.6 dung:0.6 ha:0.6 ngoc:0.6 khanh:0.5 vy:0.5
      bao:0.5 thao:0.5 vinh:0.4 tam:0.4 hanh:0.4`,
    tail: ['la ta kha mac tieu luu chu doan trinh lam', 'n ng'],
    tailShare: 0.03,
  },
  chinese: {
    name: 'chinese',
    surnames: `wang:71 li:70 zhang:67 liu:54 chen:46 yang:31 huang:22 zhao:20 wu:20 zhou:19 xu:16 sun:15 ma:13
      zhu:12 hu:11 guo:11 he:10 lin:10 gao:10 luo:9 zheng:9 liang:8 xie:7 song:6 tang:6 han:5 feng:5 deng:5
      cao:5 peng:4`,
    given: `wei:2 jing:1.8 li:1.5 min:1.4 jun:1.4 yan:1.3 hui:1.2 lei:1.2 fang:1.1 yang:1 hao:1 xin:1 yu:1 ying:1
      jie:0.9 tao:0.9 ming:0.9 lin:0.8 qiang:0.8 hong:0.8 mei:0.8 na:0.7 ping:0.7 chao:0.6 bin:0.6 xiaoming:0.5
      xiaoli:0.5 jian:0.5 yong:0.5 juan:0.5`,
    tail: ['qiu shi lu dai yuan pan jiang cai du dong', 'an g'],
    tailShare: 0.1,
  },
  indian: {
    name: 'indian',
    surnames: `patel:120 singh:110 kumar:100 shah:60 sharma:55 gupta:40 reddy:35 rao:30 iyer:20 nair:20 das:20
      joshi:18 mehta:18 desai:16 chopra:10 malhotra:10 agarwal:12 bhat:10 pillai:10 menon:9 verma:12 mishra:11
      jain:11 khan:15 chauhan:8`,
    given: `rahul:1.5 priya:1.5 amit:1.4 anita:1.2 raj:1.2 sanjay:1.1 deepak:1.1 pooja:1 vikram:1 neha:1 arjun:0.9
      kavita:0.9 suresh:0.9 sunita:0.9 ravi:0.9 anil:0.8 meera:0.8 rohan:0.8 divya:0.8 arun:0.8 sunil:0.7
      lakshmi:0.7 ramesh:0.7 geeta:0.6 vijay:0.6 asha:0.6 manoj:0.6 rekha:0.5 nikhil:0.5 shreya:0.5`,
    tail: ['bala chandra krishna subra venkat rama siva gopal nara hari', 'murthy swamy nathan raman prasad'],
    tailShare: 0.3,
  },
  germanic: {
    name: 'germanic',
    surnames: `müller:95 schmidt:70 schneider:40 fischer:38 weber:34 meyer:32 wagner:30 becker:27 schulz:26
      hoffmann:25 schäfer:22 koch:21 bauer:21 richter:20 klein:20 wolf:19 schröder:18 neumann:18 schwarz:17
      zimmermann:16 johansson:25 andersson:25 karlsson:23 nilsson:22 eriksson:20 larsson:19 olsson:18
      persson:16 svensson:16 gustafsson:15`,
    given: `thomas:1.4 michael:1.3 andreas:1.2 stefan:1.1 peter:1 klaus:0.9 jürgen:0.9 wolfgang:0.8 lars:0.8
      björn:0.7 erik:0.7 anders:0.7 sabine:1 petra:0.9 ursula:0.8 monika:0.8 karin:0.8 anna:0.8 maria:0.8
      katarina:0.6 ingrid:0.6 birgit:0.6 sören:0.5 jörg:0.5 günter:0.5 heike:0.5`,
    tail: [
      'alt berg brand eich fels hof kirch lind nord ost rosen stein wald wein',
      'bach berg feld hauser mann stedt ström',
    ],
    tailShare: 0.5,
  },
  nigerian: {
    name: 'nigerian',
    surnames: `okafor:30 adeyemi:28 okonkwo:25 eze:25 ibrahim:35 bello:28 mohammed:40 abubakar:25 olawale:15
      chukwu:18 nwosu:15 adebayo:20 ogunleye:12 balogun:12 okoro:14 musa:25 yusuf:20 usman:18 aliyu:15 obi:12`,
    given: `chinedu:1 ngozi:1 oluwaseun:0.9 adebola:0.8 emeka:1 funmilayo:0.7 ibrahim:1.2 aisha:1.1 tunde:0.9
      chiamaka:0.8 yusuf:0.9 fatima:1 babatunde:0.6 folake:0.6 uche:0.7 amaka:0.7 segun:0.7 bisi:0.6 kemi:0.6`,
    tail: ['ade ola olu oke chi nna obi ife', 'bayo deji kunle mide nna tola wale yemi'],
    tailShare: 0.35,
  },
};

/** Nicknames a person may use in one source (given name -> nickname), of the cultures above. */
export const NICKNAMES: Record<string, string> = {
  james: 'jim',
  john: 'jack',
  robert: 'bob',
  michael: 'mike',
  william: 'bill',
  david: 'dave',
  richard: 'dick',
  joseph: 'joe',
  thomas: 'tom',
  charles: 'charlie',
  christopher: 'chris',
  daniel: 'danny',
  matthew: 'matt',
  anthony: 'tony',
  donald: 'don',
  steven: 'steve',
  andrew: 'drew',
  kenneth: 'kenny',
  edward: 'eddie',
  ronald: 'ron',
  timothy: 'tim',
  jeffrey: 'jeff',
  nicholas: 'nick',
  jonathan: 'jon',
  gregory: 'greg',
  alexander: 'sasha',
  patrick: 'pat',
  samuel: 'sam',
  benjamin: 'ben',
  elizabeth: 'betty',
  margaret: 'maggie',
  patricia: 'patty',
  jennifer: 'jenny',
  susan: 'suzy',
  deborah: 'deb',
  rebecca: 'becca',
  katherine: 'kathy',
  catherine: 'cathy',
  kimberly: 'kim',
  pamela: 'pam',
  christine: 'chris',
  samantha: 'sammy',
  dorothy: 'dot',
  josé: 'pepe',
  francisco: 'paco',
  jesús: 'chucho',
  guadalupe: 'lupe',
  alejandro: 'alex',
  antonio: 'toño',
  stefan: 'steffi',
  wolfgang: 'wolf',
  katarina: 'kati',
  babatunde: 'tunde',
  oluwaseun: 'seun',
  folake: 'fola',
};

export interface Table {
  names: string[];
  cumulative: number[];
}

export function table(spec: string): Table {
  const names: string[] = [];
  const cumulative: number[] = [];
  let total = 0;
  for (const item of spec.trim().split(/\s+/)) {
    const at = item.lastIndexOf(':');
    names.push(item.slice(0, at));
    cumulative.push((total += Number(item.slice(at + 1))));
  }
  return { names, cumulative };
}
