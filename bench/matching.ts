/**
 * bench:matching — N new accounts against N identities and each other, at 10k and 100k (1M with
 * BENCH_MATCHING_1M=1), for the main configuration (two mandatory attributes) and one without a
 * mandatory attribute. The accounts go through match() in batches of MATCH_BATCH (250), each
 * batch joining the baseline after its match(), as the aggregation calls it.
 *
 * Recall is checked at full size: MATCH_RECALL_SAMPLE accounts drawn at random (at most
 * MATCH_RECALL_PAIRS = 4 x 10^6 exhaustive pairs per check, and at least 20 accounts) are
 * matched by the indexes and scored exhaustively against the whole identity baseline; the pairs
 * and scores must be identical.
 *
 * Goals (printed beside each figure; exit 1 on a miss): main 100k x 100k <= 10 s, 1M x 1M <= 10 min;
 * without a mandatory attribute 100k x 100k <= 60 s; recall 100 %. A run past MATCH_MAX_FACTOR (3)
 * times its goal stops there and reports its projected time (a miss either way).
 * Environment: MATCH_BATCH, MATCH_RECALL_SAMPLE (200), MATCH_RECALL_PAIRS, MATCH_MAX_FACTOR,
 * MATCH_SEED, MATCH_SIZES (comma-separated, overrides the sizes), MATCH_CONFIGS (comma-separated labels, default all).
 */
import {
  type MatchRecord,
  type MatchResult,
  type MatchingSettings,
  buildExhaustiveMatcher,
  buildMatcher,
} from '../src/core/matching';
import { MAIN_SETTINGS, NO_MANDATORY_SETTINGS, generate, rng } from './matching-data';

const SEED = Number(process.env.MATCH_SEED ?? 20261120);
const BATCH = Number(process.env.MATCH_BATCH ?? 250);
const RECALL_SAMPLE = Number(process.env.MATCH_RECALL_SAMPLE ?? 200);
const MAX_FACTOR = Number(process.env.MATCH_MAX_FACTOR ?? 3);
/** Exhaustive pairs per recall check (the no-mandatory configuration scores about 10^5 pairs/s). */
const RECALL_PAIRS = Number(process.env.MATCH_RECALL_PAIRS ?? 4e6);
const SIZES = process.env.MATCH_SIZES
  ? process.env.MATCH_SIZES.split(',').map(Number)
  : [10_000, 100_000, ...(process.env.BENCH_MATCHING_1M === '1' ? [1_000_000] : [])];

const ONLY = process.env.MATCH_CONFIGS?.split(',');
interface Config {
  label: string;
  settings: MatchingSettings;
  goalS: Record<number, number>;
}
const ALL_CONFIGS: Config[] = [
  { label: 'main', settings: MAIN_SETTINGS, goalS: { 100_000: 10, 1_000_000: 600 } },
  { label: 'no-mandatory', settings: NO_MANDATORY_SETTINGS, goalS: { 100_000: 60 } },
];
const CONFIGS = ALL_CONFIGS.filter((c) => !ONLY || ONLY.includes(c.label));

interface Goal {
  label: string;
  value: string;
  want: string;
  ok: boolean;
}
const goals: Goal[] = [];
const fmt = (x: number, d = 1): string => x.toLocaleString('en-US', { maximumFractionDigits: d });

function pairSet(r: MatchResult): Set<string> {
  const out = new Set<string>();
  for (const list of r.duplicates.values())
    for (const d of list) out.add(`${d.accountId}|${d.candidateId}|${d.score}|${JSON.stringify(d.scores)}`);
  return out;
}

interface TimedRun {
  seconds: number;
  done: number;
  stopped: boolean;
  pairsScored: number;
  candidatesMean: number;
  candidatesMax: number;
  matched: number;
  truthFound: number;
  /** Accounts matched so far that copy an identity or an earlier account (seeded). */
  truthSeen: number;
  peakRssMb: number;
}

/** The aggregation's call pattern, stopping once past `capS` seconds. */
function timedRun(settings: MatchingSettings, data: ReturnType<typeof generate>, capS: number): TimedRun {
  const t0 = performance.now();
  const m = buildMatcher(settings);
  m.addBaseline(data.identities);
  const run: TimedRun = {
    seconds: 0,
    done: 0,
    stopped: false,
    pairsScored: 0,
    candidatesMean: 0,
    candidatesMax: 0,
    matched: 0,
    truthFound: 0,
    truthSeen: 0,
    peakRssMb: 0,
  };
  let candidates = 0;
  for (let i = 0; i < data.accounts.length; i += BATCH) {
    const batch = data.accounts.slice(i, i + BATCH);
    const r = m.match(batch, { topK: Infinity });
    m.addBaseline(batch);
    run.done += batch.length;
    run.pairsScored += r.stats.pairsCompared;
    run.matched += r.stats.pairs.matched;
    candidates += r.stats.candidatesMean * batch.length;
    run.candidatesMax = Math.max(run.candidatesMax, r.stats.candidatesMax);
    for (const a of batch) if (data.truth.has(a.id)) run.truthSeen++;
    for (const [account, list] of r.duplicates)
      if (list.some((d) => d.candidateId === data.truth.get(account))) run.truthFound++;
    if ((i / BATCH) % 40 === 0) run.peakRssMb = Math.max(run.peakRssMb, process.memoryUsage().rss / 2 ** 20);
    if ((performance.now() - t0) / 1000 > capS) {
      run.stopped = true;
      break;
    }
  }
  run.seconds = (performance.now() - t0) / 1000;
  run.candidatesMean = candidates / run.done;
  run.peakRssMb = Math.max(run.peakRssMb, process.memoryUsage().rss / 2 ** 20);
  return run;
}

/** Random accounts, indexes against the exhaustive scorer, both against the whole identity baseline. */
function recall(
  settings: MatchingSettings,
  identities: MatchRecord[],
  accounts: MatchRecord[],
  size: number,
): { sample: number; oracle: number; hit: number; extra: number; indexMs: number; exhaustiveMs: number } {
  const random = rng(SEED ^ size);
  const picked = new Set<number>();
  const want = Math.min(accounts.length, RECALL_SAMPLE, Math.max(20, Math.floor(RECALL_PAIRS / identities.length)));
  while (picked.size < want) picked.add(Math.floor(random() * accounts.length));
  const sample = [...picked].sort((a, b) => a - b).map((i) => accounts[i]!);
  const time = (exhaustive: boolean): { pairs: Set<string>; ms: number } => {
    const m = exhaustive ? buildExhaustiveMatcher(settings) : buildMatcher(settings);
    m.addBaseline(identities);
    const t0 = performance.now();
    const pairs = pairSet(m.match(sample, { topK: Infinity }));
    return { pairs, ms: performance.now() - t0 };
  };
  const idx = time(false);
  const ora = time(true);
  let hit = 0;
  for (const p of idx.pairs) if (ora.pairs.has(p)) hit++;
  return {
    sample: sample.length,
    oracle: ora.pairs.size,
    hit,
    extra: idx.pairs.size - hit,
    indexMs: idx.ms,
    exhaustiveMs: ora.ms,
  };
}

process.stdout.write(`bench:matching (seed ${SEED}, batches of ${BATCH}; node ${process.version})\n`);
for (const n of SIZES) {
  const tg = performance.now();
  const data = generate(SEED, n, n);
  process.stdout.write(
    `\n${fmt(n, 0)} identities x ${fmt(n, 0)} accounts (generated in ${fmt((performance.now() - tg) / 1000)} s)\n`,
  );
  for (const { label, settings, goalS } of CONFIGS) {
    const goal = goalS[n];
    const cap = goal === undefined ? Infinity : goal * MAX_FACTOR;
    const r = timedRun(settings, data, cap);
    const projected = r.stopped ? (r.seconds * n) / r.done : r.seconds;
    const time = r.stopped
      ? `stopped at ${fmt(r.seconds)} s after ${fmt((100 * r.done) / n)} % (about ${fmt(projected, 0)} s projected)`
      : `${fmt(r.seconds)} s`;
    process.stdout.write(
      `  ${label.padEnd(13)} ${time}; candidates per account mean ${fmt(r.candidatesMean)} max ${fmt(r.candidatesMax, 0)}; ` +
        `pairs scored ${fmt(r.pairsScored / 1e6, 2)} M (${fmt(r.pairsScored / r.done, 1)} per account); matched ${fmt(r.matched, 0)}; ` +
        `seeded duplicates found ${fmt((100 * r.truthFound) / Math.max(1, r.truthSeen))} %; peak RSS ${fmt(r.peakRssMb, 0)} MiB\n`,
    );
    if (goal !== undefined)
      goals.push({
        label: `${label} ${fmt(n, 0)} x ${fmt(n, 0)}: wall time`,
        value: r.stopped ? `~${fmt(projected, 0)} s` : `${fmt(r.seconds)} s`,
        want: `<= ${goal} s`,
        ok: !r.stopped && r.seconds <= goal,
      });
    const rc = recall(settings, data.identities, data.accounts, n);
    const pct = rc.oracle ? (100 * rc.hit) / rc.oracle : 100;
    process.stdout.write(
      `  ${''.padEnd(13)} recall on ${rc.sample} random accounts vs the exhaustive scorer over all ${fmt(n, 0)} identities: ` +
        `${fmt(pct, 3)} % of ${rc.oracle} pairs${rc.extra ? `, ${rc.extra} extra` : ''} (index ${fmt(rc.indexMs, 0)} ms, exhaustive ${fmt(rc.exhaustiveMs, 0)} ms)\n`,
    );
    goals.push({
      label: `${label} ${fmt(n, 0)}: recall vs exhaustive (${rc.sample} random accounts)`,
      value: `${fmt(pct, 3)} %`,
      want: '100 %',
      ok: rc.hit === rc.oracle && rc.extra === 0,
    });
  }
}

process.stdout.write('\ngoals\n');
const w = Math.max(...goals.map((g) => g.label.length));
for (const g of goals)
  process.stdout.write(
    `  ${g.label.padEnd(w)}  ${g.value.padStart(10)}   goal ${g.want.padEnd(8)} ${g.ok ? 'ok' : 'MISSED'}\n`,
  );
const missed = goals.filter((g) => !g.ok).length;
if (missed) {
  process.stdout.write(`\n${missed} goal(s) missed\n`);
  process.exitCode = 1;
}
