/**
 * bench:partitions — can one run's new accounts be split into P partitions (P workers) so that every
 * two new accounts that may be duplicates of each other meet in one partition, with no candidate
 * exchanged between partitions (issue 27, item 1)? A study of the data and settings, not of our code's
 * speed: it bounds what such a partitioned run could gain.
 *
 * Each row drives the matcher as the aggregation does (baseline, then match() per batch of 250), but
 * every batch joins the baseline after its match(), as if every new account were created: account k is
 * blocked against the baseline and every new account before it, whatever the decisions. Pairs:
 *   L1, candidates: every pair the indexes give phase 1 to evaluate (after the mandatory keys' refine);
 *   L2, blocked: the pairs that pass (thresholds, mandatory attributes): what phase 2 scores;
 *   L3, duplicates: what match() returns (the rules model: L2; probabilistic: at its threshold).
 * A partition decided before matching cannot know which candidates fail their thresholds: it must
 * keep every L1 pair together (a plan by the indexes' keys, such as a mandatory surname's code, is
 * coarser still). L2 is the floor: no partitioning without exchange does better, whatever it knows.
 * The new accounts are joined over the pairs between them (union-find), then packed
 * into P partitions, largest component first into the least loaded; balance = largest partition /
 * (accounts / P). "+ baseline": two new accounts with a common baseline candidate joined too (not
 * needed for the decisions, which read the baseline only; shown for a design that splits the baseline).
 *
 * The plan (src/core/matching/partition-plan.ts) is made before matching, from a mandatory attribute's
 * lossless keys; the bench prints its balance, by accounts and by candidate pairs (phase 1's work: a
 * common surname's class costs more than its share), and the pairs it splits. The L1 pairs passed the
 * same keys (the mandatory indexes' refine), so 0 here says the plan prepares the values as the engine
 * does; that the keys hold every passing pair is tested against the exhaustive matcher
 * (test/matching/partition-plan.test.ts).
 *
 * Goals, from issue 27's speed-ups (a run can go no faster than its largest partition): 8 workers
 * >= 4x needs balance <= 2 at P = 8; 14 workers >= 6x needs balance <= 14/6 at P = 14: the plan's
 * (the worse of the two), with no candidate pair split. Where no plan can be made the goal is missed:
 * the partitions must exchange candidates (the components' balance, L1 and L2, is printed beside it).
 * Exit 1 on a miss.
 *
 *   npm run bench:partitions
 *   PARTITION_ROWS=main,hr-documented PARTITION_SCALE=0.2 npm run bench:partitions
 */
import { type MatchRecord, type MatchingSettings, buildMatcher, parseMatchingSettings } from '../src/core/matching';
import { packHeaviestFirst, planPartitions } from '../src/core/matching/partition-plan';
import { SliceBlocker } from '../src/core/matching/slice-blocking';
import { MAIN_SETTINGS, NO_MANDATORY_SETTINGS, generate } from './matching-data';
import { MIXED, HR_BASE, hrSet } from './quality-hr';
import { DOCUMENTED } from './quality-lists';
import { simulatorSet } from './quality-sim';
import { SIMULATOR_MATCHING } from './simulated-aggregation';

const BATCH = 250;
const PS = [2, 4, 8, 14] as const;
const GOALS: Record<number, number> = { 8: 8 / 4, 14: 14 / 6 };
const SCALE = Number(process.env.PARTITION_SCALE ?? 1);

interface Row {
  label: string;
  /** What the row stands for. */
  what: string;
  settings: MatchingSettings;
  data: (identities: number, accounts: number) => { identities: MatchRecord[]; accounts: MatchRecord[] };
  identities: number;
  accounts: number;
}

const matchingData = (seed: number) => (n: number, m: number) => generate(seed, n, m);
const simulatorData = (surnames: 'common' | 'varied') => (n: number, m: number) => {
  const s = simulatorSet(surnames, n, 11);
  return { identities: s.identities, accounts: s.accounts.slice(0, m) };
};
const hrData = (n: number, m: number) =>
  hrSet({ ...HR_BASE, name: 'hr-mixed', seed: 3, identities: n, accounts: m, cultures: MIXED });

const ROWS: Row[] = [
  {
    label: 'main',
    what: "bench:matching's data, surname and e-mail mandatory",
    settings: MAIN_SETTINGS,
    data: matchingData(20261120),
    identities: 100_000,
    accounts: 100_000,
  },
  {
    label: 'simulator-varied',
    what: "the simulator's tenant, varied surnames, its rules (surname mandatory)",
    settings: { attributes: SIMULATOR_MATCHING, reviewTopK: 10 },
    data: simulatorData('varied'),
    identities: 100_000,
    accounts: 100_000,
  },
  {
    label: 'simulator-common',
    what: "the simulator's tenant, common surnames, its rules",
    settings: { attributes: SIMULATOR_MATCHING, reviewTopK: 10 },
    data: simulatorData('common'),
    identities: 100_000,
    accounts: 100_000,
  },
  {
    label: 'hr-main',
    what: "bench:quality's mixed-culture HR set, the main configuration",
    settings: MAIN_SETTINGS,
    data: hrData,
    identities: 100_000,
    accounts: 100_000,
  },
  {
    label: 'no-mandatory',
    what: "bench:matching's data, nothing mandatory (fuzzy name and e-mail indexes)",
    settings: NO_MANDATORY_SETTINGS,
    data: matchingData(20261120),
    identities: 100_000,
    accounts: 20_000,
  },
  {
    label: 'hr-documented',
    what: "the HR set, docs/matching-probabilistic.md's list (probabilistic, nothing mandatory)",
    settings: parseMatchingSettings({ matching: DOCUMENTED }),
    data: hrData,
    identities: 100_000,
    accounts: 20_000,
  },
];

/** Pairs of record numbers (baseline first, then the new accounts in order) with a flag. */
class Pairs {
  a = new Int32Array(1 << 16);
  b = new Int32Array(1 << 16);
  blocked = new Uint8Array(1 << 16);
  n = 0;
  push(a: number, b: number, blocked: boolean): void {
    if (this.n === this.a.length) {
      const a2 = new Int32Array(this.n * 2);
      const b2 = new Int32Array(this.n * 2);
      const f2 = new Uint8Array(this.n * 2);
      a2.set(this.a);
      b2.set(this.b);
      f2.set(this.blocked);
      [this.a, this.b, this.blocked] = [a2, b2, f2];
    }
    this.a[this.n] = a;
    this.b[this.n] = b;
    this.blocked[this.n++] = blocked ? 1 : 0;
  }
}

/**
 * The pair outcomes are the blocker's own (private, not reported per pair): the bench wraps its
 * evaluation for the duration of a row. `evaluate(a, b, ...)` gets the two record numbers.
 */
type Evaluate = (this: unknown, a: number, b: number, ...rest: unknown[]) => string;
const blocker = SliceBlocker.prototype as unknown as { evaluate: Evaluate };
const evaluate = blocker.evaluate;

/** Component sizes of the new accounts (numbers >= baseline), largest first. */
function components(p: Pairs, total: number, baseline: number, keep: (k: number) => boolean, glue: boolean): number[] {
  const parent = new Int32Array(total).map((_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  for (let k = 0; k < p.n; k++) {
    const a = p.a[k]!;
    const b = p.b[k]!;
    if (!keep(k) || (!glue && (a < baseline || b < baseline))) continue;
    parent[find(a)] = find(b);
  }
  const size = new Map<number, number>();
  for (let j = baseline; j < total; j++) size.set(find(j), (size.get(find(j)) ?? 0) + 1);
  return [...size.values()].sort((x, y) => y - x);
}

/** Largest partition over an even share when components go, largest first, to the least loaded (as the plan packs). */
function balance(sizes: number[], parts: number, accounts: number): number {
  return Math.max(...packHeaviestFirst(sizes, parts).loads) / (accounts / parts);
}

function study(row: Row): string[] {
  const n = Math.round(row.identities * SCALE);
  const m = Math.round(row.accounts * SCALE);
  const { identities, accounts } = row.data(n, m);
  const baseline = identities.length;
  const total = baseline + accounts.length;
  const number = new Map<string, number>();
  identities.forEach((r, i) => number.set(r.id, i));
  accounts.forEach((r, j) => number.set(r.id, baseline + j));
  const candidates = new Pairs();
  const duplicates = new Pairs();
  const started = performance.now();
  const matcher = buildMatcher(row.settings);
  matcher.addBaseline(identities);
  if (row.settings.model === 'probabilistic') matcher.estimate(accounts);
  blocker.evaluate = function (a, b, ...rest) {
    const outcome = evaluate.call(this, a, b, ...rest);
    candidates.push(a, b, outcome === 'matched');
    return outcome;
  };
  try {
    for (let i = 0; i < accounts.length; i += BATCH) {
      const batch = accounts.slice(i, i + BATCH);
      for (const [id, found] of matcher.match(batch, { topK: Number.POSITIVE_INFINITY }).duplicates)
        for (const d of found) duplicates.push(number.get(id)!, number.get(d.candidateId)!, true);
      matcher.addBaseline(batch);
    }
  } finally {
    blocker.evaluate = evaluate;
  }
  const seconds = (performance.now() - started) / 1000;
  const out = [
    `${row.label}: ${row.what}; ${baseline.toLocaleString('en-US')} identities x ${accounts.length.toLocaleString('en-US')} new accounts, matched in ${seconds.toFixed(1)} s`,
  ];
  const levels: [string, Pairs, (k: number) => boolean][] = [
    ['L1 candidates', candidates, () => true],
    ['L2 blocked', candidates, (k) => candidates.blocked[k] === 1],
    ['L3 duplicates', duplicates, () => true],
  ];
  // New accounts only, per level: the goal lines below read L1's and L2's again.
  const newOnly = new Map<string, number[]>();
  for (const [level, pairs, keep] of levels) {
    for (const glue of [false, true]) {
      const sizes = components(pairs, total, baseline, keep, glue);
      if (!glue) newOnly.set(level, sizes);
      const bal = PS.map((p) => `${p}: ${balance(sizes, p, accounts.length).toFixed(2)}`).join(', ');
      const largest = `${sizes[0]} (${((100 * sizes[0]!) / accounts.length).toFixed(2)} %)`;
      out.push(
        `  ${level.padEnd(14)} ${glue ? '+ baseline' : 'new only  '}  components ${String(sizes.length).padStart(6)}, largest ${largest.padEnd(16)} balance at P = ${bal}`,
      );
    }
  }
  const l1 = newOnly.get('L1 candidates')!;
  const l2 = newOnly.get('L2 blocked')!;
  for (const p of Object.keys(GOALS).map(Number)) {
    const goal = `goal <= ${GOALS[p]!.toFixed(2)} (${p === 8 ? '8 workers >= 4x' : '14 workers >= 6x'})`;
    const plan = planPartitions(row.settings, accounts, p, identities);
    if (!plan) {
      // Components are known only after matching: without a plan the partitions must exchange candidates.
      const b1 = balance(l1, p, accounts.length).toFixed(2);
      const b2 = balance(l2, p, accounts.length).toFixed(2);
      out.push(
        `  goal: no plan before matching (no mandatory attribute with lossless keys): candidates must be exchanged; components' balance at P = ${p}: L1 ${b1}, L2 ${b2} (no exchange-free plan beats L2)   ${goal}: MISSED`,
      );
      misses.push(`${row.label}: no exchange-free plan at P = ${p} (components' balance L1 ${b1}, L2 ${b2})`);
      continue;
    }
    // The plan is decided before matching: every candidate pair must fall inside one of its partitions.
    // Phase 1's work follows the candidate pairs, not the accounts: a common surname's class costs more
    // than its share of accounts. Each pair counts for the partition and class of the account blocked.
    let split = 0;
    const work = new Array<number>(p).fill(0);
    const classWork = new Map<number, number>();
    for (let k = 0; k < candidates.n; k++) {
      const a = candidates.a[k]! - baseline;
      const b = candidates.b[k]! - baseline;
      if (a < 0) continue;
      work[plan.partitionOf[a]!]!++;
      classWork.set(plan.classOf[a]!, (classWork.get(plan.classOf[a]!) ?? 0) + 1);
      if (b >= 0 && plan.partitionOf[a] !== plan.partitionOf[b]) split++;
    }
    const pairs = work.reduce((x, y) => x + y, 0);
    const byAccounts = Math.max(...plan.sizes) / (accounts.length / p);
    const byWork = Math.max(...work) / (pairs / p);
    const b = Math.max(byAccounts, byWork);
    const ok = b <= GOALS[p]! && split === 0;
    out.push(
      `  goal: plan by ${plan.attribute}'s key classes (largest ${plan.largestClass}), P = ${p}: balance ${byAccounts.toFixed(2)} by accounts, ${byWork.toFixed(2)} by candidate pairs; pairs split ${split} (goal 0)   ${goal}: ${ok ? 'ok' : 'MISSED'}`,
    );
    // What whole classes allow: no packing puts the heaviest class's pairs in less than one partition.
    const heaviest = [...classWork.values()].sort((x, y) => y - x);
    const bound = pairs > 0 ? Math.max(1, (heaviest[0]! * p) / pairs) : 1;
    const packed = pairs > 0 ? balance(heaviest, p, pairs) : 1;
    out.push(
      `    whole classes: at least ${bound.toFixed(2)} (the heaviest class has ${pairs > 0 ? ((100 * heaviest[0]!) / pairs).toFixed(1) : 0} % of the pairs); ${packed.toFixed(2)} packed greedily by the pairs they had`,
    );
    if (!ok) misses.push(`${row.label}: plan at P = ${p}: balance ${b.toFixed(2)}, ${split} candidate pairs split`);
  }
  return out;
}

const misses: string[] = [];
const only = process.env.PARTITION_ROWS?.split(',');
console.log(`bench:partitions (batches of ${BATCH}, sizes x ${SCALE}; node ${process.version})`);
for (const row of ROWS.filter((r) => !only || only.includes(r.label))) console.log(study(row).join('\n'));
for (const m of misses) console.log(`MISSED: ${m}`);
if (misses.length > 0) process.exitCode = 1;
