/**
 * bench:matching — N new accounts against N identities and each other (default 100,000), four
 * attributes, then recall and speed-up against the exhaustive oracle on an S x S sample (default
 * 10,000). Then the aggregation's call pattern: the same accounts in batches of MATCH_BATCH (250),
 * each batch added to the baseline after its match() (same pairs as one call), against one call.
 * Environment: MATCH_N, MATCH_SAMPLE, MATCH_UNION_SAMPLE, MATCH_BATCH, MATCH_SEED.
 */
import {
  type MatchRecord,
  type MatchResult,
  type MatchingSettings,
  buildExhaustiveMatcher,
  buildMatcher,
} from '../src/core/matching';
import { generate } from './matching-data';

const N = Number(process.env.MATCH_N ?? 100_000);
const S = Math.min(N, Number(process.env.MATCH_SAMPLE ?? 10_000));
/** The union configuration is slower per account (weak character filter for JW): smaller sample. */
const SU = Math.min(S, Number(process.env.MATCH_UNION_SAMPLE ?? 2_000));
const SEED = Number(process.env.MATCH_SEED ?? 20261120);
const BATCH = Number(process.env.MATCH_BATCH ?? 250);

const MAIN: MatchingSettings = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
    { attribute: 'userName', algorithm: 'levenshtein', threshold: 80, mandatory: false },
  ],
  reviewTopK: 10,
};

/** No mandatory attribute: candidates are the union of every attribute's index. */
const UNION: MatchingSettings = {
  attributes: [
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 85, mandatory: false },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 95, mandatory: false },
    { attribute: 'userName', algorithm: 'levenshtein', threshold: 90, mandatory: false },
  ],
  reviewTopK: 10,
};

function run(
  settings: MatchingSettings,
  identities: MatchRecord[],
  accounts: MatchRecord[],
  exhaustive = false,
): { result: MatchResult; ms: number } {
  const t0 = performance.now();
  const m = exhaustive ? buildExhaustiveMatcher(settings) : buildMatcher(settings);
  m.addBaseline(identities);
  const result = m.match(accounts, { topK: Infinity });
  return { result, ms: performance.now() - t0 };
}

function pairSet(r: MatchResult): Set<string> {
  const out = new Set<string>();
  for (const list of r.duplicates.values())
    for (const d of list) out.add(`${d.accountId}|${d.candidateId}|${d.score}|${JSON.stringify(d.scores)}`);
  return out;
}

function p99(hist: number[]): string {
  const bounds = [0, 1, 5, 10, 50, 100, 200, 500, 1000, 5000, Infinity];
  const total = hist.reduce((a, b) => a + b, 0);
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    seen += hist[i]!;
    if (seen >= 0.99 * total) return `<= ${bounds[i]}`;
  }
  return '?';
}

const rows: [string, string][] = [];
const row = (k: string, v: string | number): void => {
  rows.push([k, typeof v === 'number' ? v.toLocaleString('en-US', { maximumFractionDigits: 2 }) : v]);
};

const tg = performance.now();
const data = generate(SEED, N, N);
row(
  'data',
  `${N.toLocaleString('en-US')} identities + ${N.toLocaleString('en-US')} accounts, generated in ${Math.round(performance.now() - tg)} ms`,
);

// 1. Full run, main configuration.
const full = run(MAIN, data.identities, data.accounts);
const st = full.result.stats;
row('main: wall incl. index build (s)', full.ms / 1000);
row('main: index build (ms)', st.buildMs);
row('main: candidates per account, mean', st.candidatesMean);
row('main: candidates per account, max / p99', `${st.candidatesMax} / ${p99(st.candidatesHistogram)}`);
row('main: pairs scored', st.pairsCompared);
row(
  'main: pairs matched / below / mandatory failed / missing',
  `${st.pairs.matched} / ${st.pairs.below_threshold} / ${st.pairs.mandatory_failed} / ${st.pairs.value_missing}`,
);
row('main: accounts with duplicates', st.accountsWithDuplicates);
row('main: full scans', JSON.stringify(st.fullScans));
let tp = 0;
let predicted = 0;
for (const [account, list] of full.result.duplicates) {
  predicted += list.length;
  if (list.some((d) => d.candidateId === data.truth.get(account))) tp++;
}
row(
  'main: seeded truth recall (duplicate found for account)',
  `${((100 * tp) / data.truth.size).toFixed(1)} % of ${data.truth.size}`,
);
row('main: pairs reported per account with duplicates', predicted / Math.max(1, st.accountsWithDuplicates));

// 2. Incremental: N accounts in batches, each batch joining the baseline after its match().
{
  const t0 = performance.now();
  const m = buildMatcher(MAIN);
  m.addBaseline(data.identities);
  let matched = 0;
  let calls = 0;
  for (let i = 0; i < data.accounts.length; i += BATCH) {
    const batch = data.accounts.slice(i, i + BATCH);
    matched += m.match(batch, { topK: Infinity }).stats.pairs.matched;
    m.addBaseline(batch);
    calls++;
  }
  const ms = performance.now() - t0;
  row(`main in ${calls} batches of ${BATCH}: wall (s)`, ms / 1000);
  row(
    'main batched / one call: wall ratio',
    `${(ms / full.ms).toFixed(2)}x (pairs matched ${matched} vs ${st.pairs.matched})`,
  );
}

// 3. Sample: index vs exhaustive oracle.
for (const [label, settings, size] of [
  ['main', MAIN, S],
  ['union', UNION, SU],
] as const) {
  const sid = data.identities.slice(0, size);
  const sacc = data.accounts.slice(0, size);
  const idx = run(settings, sid, sacc);
  const ora = run(settings, sid, sacc, true);
  const want = pairSet(ora.result);
  const got = pairSet(idx.result);
  let hit = 0;
  for (const p of got) if (want.has(p)) hit++;
  const exact = hit === want.size && got.size === want.size;
  row(`${label} sample ${size}x${size}: oracle pairs`, want.size);
  row(
    `${label} sample: recall vs oracle`,
    `${want.size ? ((100 * hit) / want.size).toFixed(3) : '100'} %${exact ? ' (identical pairs and scores)' : ` (${want.size - hit} missed, ${got.size - hit} extra)`}`,
  );
  row(
    `${label} sample: index ms / exhaustive ms / speed-up`,
    `${Math.round(idx.ms)} / ${Math.round(ora.ms)} / ${(ora.ms / idx.ms).toFixed(1)}x`,
  );
  row(
    `${label} sample: candidates mean (index) vs pairs (exhaustive)`,
    `${idx.result.stats.candidatesMean.toFixed(1)} vs ${Math.round(ora.result.stats.candidatesMean)}`,
  );
}
row('rss (MiB)', Math.round(process.memoryUsage().rss / 1048576));

const w = Math.max(...rows.map((r) => r[0].length));
process.stdout.write(`\nbench:matching (seed ${SEED})\n`);
for (const [k, v] of rows) process.stdout.write(`${k.padEnd(w)}  ${v}\n`);
