/**
 * Why bench:quality's true pairs are missed (labels used; a look, not a goal). For hr-mixed (the bench's
 * generator settings) at one seed and one list, at the default threshold unless given:
 * - each true pair "never a candidate" (the matcher does not score it at all) or "scored below";
 * - the level patterns of the scored pairs, most missed true pairs first, true / false counts and
 *   mean probability beside each, and the probability bands of "exact name, nothing else";
 * - a ceiling: cells (level pattern x probability band of 0.1) taken in descending true share while
 *   pair precision stays >= 0.95, i.e. what any recalibration of these features could reach (an
 *   upper bound: the cells are chosen with the labels);
 * - calibration (true share per probability band), and the true pairs that only a transitive link
 *   (another record of the account's person that it found) would list.
 * `npm run bench:quality` compiles it; then
 * `node .bench-out/bench/quality-misses.js [documented|admin] [seed] [threshold]`.
 */
import { buildMatcher } from '../src/core/matching';
import { HR_BASE, hrSet } from './quality-hr';
import { ADMIN, DOCUMENTED } from './quality-lists';
import { settings, truthOf } from './quality-measure';

const list = (process.argv[2] === 'admin' ? ADMIN : DOCUMENTED).attributes;
const seed = Number(process.argv[3] ?? 1);
const threshold = Number(process.argv[4] ?? 0.9);
const set = hrSet({ ...HR_BASE, name: `hr-mixed-s${seed}`, seed });
const truth = truthOf(set);
// Every scored pair (the lowest threshold): the result at a threshold is the pairs at or above it, since
// which records stand for one person does not depend on the threshold.
const m = buildMatcher(settings({ model: 'probabilistic', attributes: list, probabilityThreshold: Number.MIN_VALUE }));
m.addBaseline(set.identities);
const result = m.match(set.accounts, { topK: Infinity });
console.log('prior', m.parameters()?.prior);
for (const a of m.parameters()!.attributes) {
  console.log(
    ' ',
    a.attribute,
    a.levels.map((l) => `${l.level}: ${Math.log2(l.m / l.u).toFixed(2)} (m ${l.m.toFixed(3)})`).join('; '),
  );
}
const scored = new Map<string, number>();
const pattern = new Map<string, { t: number; f: number; tMiss: number; pSum: number; ex: string }>();
for (const [acc, dups] of result.duplicates) {
  for (const d of dups) {
    const key = `${acc}|${d.candidateId}`;
    scored.set(key, d.probability!);
    const pat = d
      .explanation!.filter((e) => e.attribute !== '(prior)' && !e.attribute.startsWith('prior'))
      .map((e) => `${e.attribute.slice(0, 5)}=${e.level}`)
      .join(' | ');
    const e = pattern.get(pat) ?? { t: 0, f: 0, tMiss: 0, pSum: 0, ex: '' };
    const isTrue = truth.has(key);
    if (isTrue) e.t++;
    else e.f++;
    if (isTrue && d.probability! < threshold) e.tMiss++;
    e.pSum += d.probability!;
    if (!e.ex && isTrue && d.probability! < threshold)
      e.ex = `${key} ${d.explanation!.map((x) => x.weight).join(',')} p=${d.probability!.toFixed(3)}`;
    pattern.set(pat, e);
  }
}
let never = 0;
let below = 0;
const neverKinds = new Map<string, number>();
const belowKinds = new Map<string, number>();
for (const t of truth) {
  const p = scored.get(t);
  const kind = set.kind.get(t.split('|')[0]!)!;
  if (p === undefined) {
    never++;
    neverKinds.set(kind, (neverKinds.get(kind) ?? 0) + 1);
  } else if (p < threshold) {
    below++;
    belowKinds.set(kind, (belowKinds.get(kind) ?? 0) + 1);
  }
}
console.log(
  `true pairs ${truth.size}; never a candidate ${never} (${[...neverKinds].join(' ')}); below ${threshold}: ${below} (${[...belowKinds].join(' ')})`,
);
const rows = [...pattern].sort((a, b) => b[1].tMiss - a[1].tMiss).slice(0, 30);
for (const [pat, e] of rows) {
  console.log(
    `${String(e.tMiss).padStart(4)} missed; true ${e.t} false ${e.f} (${(e.t / (e.t + e.f)).toFixed(2)}) mean p ${(e.pSum / (e.t + e.f)).toFixed(2)} :: ${pat}\n        e.g. ${e.ex}`,
  );
}

// Within the commonest missed pattern: probability bands, true / false, and the false pairs' account kinds.
const bands = new Map<string, [number, number]>();
const falseKinds = new Map<string, number>();
for (const [acc, dups] of result.duplicates) {
  for (const d of dups) {
    const levels = d.explanation!.map((e) => e.level);
    if (levels[0] !== 'exact' || levels[1] !== 'missing' || levels[3] !== 'missing') continue;
    const isTrue = truth.has(`${acc}|${d.candidateId}`);
    const b = (Math.floor(d.probability! * 10) / 10).toFixed(1);
    const e = bands.get(b) ?? [0, 0];
    e[isTrue ? 0 : 1]++;
    bands.set(b, e);
    if (!isTrue) {
      const k = `${set.kind.get(acc)} ${dups.length > 1 ? 'multi' : 'single'} ${d.candidateId.startsWith('id') ? 'id' : 'acc'}`;
      falseKinds.set(k, (falseKinds.get(k) ?? 0) + 1);
    }
  }
}
console.log('name exact, nothing else: probability band -> true/false', [...bands].sort());
console.log('false pairs by account kind', [...falseKinds]);

// Ceiling with labels: cells (level pattern x probability band of 0.1) in descending true share, the
// best pair recall while pair precision stays >= 0.95 (what any recalibration of these features could reach).
const cells = new Map<string, [number, number]>();
for (const [acc, dups] of result.duplicates) {
  for (const d of dups) {
    const key =
      d
        .explanation!.filter((e) => !e.attribute.startsWith('prior'))
        .map((e) => e.level)
        .join('|') + `#${Math.floor(d.probability! * 10)}`;
    const e = cells.get(key) ?? [0, 0];
    e[truth.has(`${acc}|${d.candidateId}`) ? 0 : 1]++;
    cells.set(key, e);
  }
}
let tp = 0;
let fp = 0;
let best = 0;
for (const [, [t, f]] of [...cells].sort((a, b) => b[1][0] / (b[1][0] + b[1][1]) - a[1][0] / (a[1][0] + a[1][1]))) {
  if ((tp + t) / (tp + t + fp + f) < 0.95) break;
  tp += t;
  fp += f;
  best = tp / truth.size;
}
console.log(`ceiling: pair recall ${best.toFixed(3)} at pair precision >= 0.95 (${tp} true, ${fp} false)`);

// Calibration: true share per probability band (all scored pairs).
const cal = new Map<number, [number, number]>();
for (const [acc, dups] of result.duplicates) {
  for (const d of dups) {
    const b = Math.min(9, Math.floor(d.probability! * 10));
    const e = cal.get(b) ?? [0, 0];
    e[truth.has(`${acc}|${d.candidateId}`) ? 0 : 1]++;
    cal.set(b, e);
  }
}
console.log(
  'calibration',
  [...cal]
    .sort((a, b) => a[0] - b[0])
    .map(([b, [t, f]]) => `${b / 10}: ${(t / (t + f)).toFixed(2)} (${t + f})`)
    .join('; '),
);

// Missed true pairs whose account has another true candidate scored (records of one person as rivals).
let rivalsMissed = 0;
let sumOver = 0;
for (const [acc, dups] of result.duplicates) {
  const trues = dups.filter((d) => truth.has(`${acc}|${d.candidateId}`));
  const missed = trues.filter((d) => d.probability! < threshold);
  if (trues.length > 1) rivalsMissed += missed.length;
  if (missed.length > 0 && trues.length > 1 && trues.reduce((s, d) => s + d.probability!, 0) >= threshold)
    sumOver += missed.length;
}
console.log(
  `missed true pairs with another true candidate: ${rivalsMissed}; of them where the true candidates' sum reaches the threshold: ${sumOver}`,
);

// Accounts with a form: their other candidates below the threshold (true / false), by probability floor.
for (const floor of [0.1, 0.3, 0.5]) {
  let t = 0;
  let f = 0;
  for (const [acc, dups] of result.duplicates) {
    if (!dups.some((d) => d.probability! >= threshold)) continue;
    for (const d of dups) {
      if (d.probability! >= threshold || d.probability! < floor) continue;
      if (truth.has(`${acc}|${d.candidateId}`)) t++;
      else f++;
    }
  }
  console.log(`accounts with a form, other candidates at ${floor}-${threshold}: true ${t}, false ${f}`);
}

// True pairs never a candidate whose account found another record of the person (a transitive link).
{
  let n = 0;
  for (const t of truth) {
    if (scored.has(t)) continue;
    const acc = t.split('|')[0]!;
    if (
      (result.duplicates.get(acc) ?? []).some(
        (d) => d.probability! >= threshold && truth.has(`${acc}|${d.candidateId}`),
      )
    )
      n++;
  }
  console.log(`never a candidate, but the account found another record of its person: ${n}`);
}
