import { readFileSync, writeFileSync } from 'node:fs';
import { errorMessage, isFusionError } from '../core/errors';
import {
  type MatchRecord,
  type MatchResult,
  type ModelParameters,
  type PotentialDuplicate,
  parseMatchingSettings,
} from '../core/matching';
import { parseCsv } from '../core/matching/csv';
import { buildRunMatcher } from '../core/matching/parallel/parallelism';
import { configurationWarnings } from '../core/matching/probabilistic/diagnostics';
import { SWEEP_FLOOR, reportData } from './match-report/report-build';
import { type ScoredPair, type SweepPoint, sweep, sweepThresholds } from './match-report/report-data';
import { parameterLines, sweepLines } from './match-report/summary-lines';
import { renderReportPage } from './match-report/report-page';
import { InputError, UsageError, readOptions } from './match-options';

const USAGE = `usage: fusion-proxy match --identities FILE --accounts FILE --config FILE [--truth FILE]
                          [--top-k N] [--report FILE.html] [--summary-json]

  Offline matching for tuning thresholds. Records: a JSON array of {"id", "attributes": {...}} or a
  CSV with an "id" column (other columns are attributes). The config is the connector configuration;
  only its "matching" section is used. The truth file is a CSV of accountId,candidateId pairs.
  Prints each potential duplicate as an NDJSON line on stdout and a summary on stderr.
  Every candidate of an account is kept unless --top-k N asks for the best N only.
  With matching.model "probabilistic" the summary prints the estimated parameters and a threshold
  sweep (forms opened, and precision/recall with --truth). --report writes one self-contained HTML
  page with the charts.
`;

export interface MatchIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read ${what} file ${file}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
  }
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new InputError(`${file} is not valid JSON: ${errorMessage(e)}`);
  }
}

function csvRows(text: string, file: string): string[][] {
  try {
    return parseCsv(text);
  } catch (e) {
    throw new InputError(`${file}: ${errorMessage(e)}`);
  }
}

/** A JSON array of {id, attributes} or a CSV with an id column. */
export function loadRecords(file: string, what: string): MatchRecord[] {
  const text = readText(file, what);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    const data = parseJson(text, file);
    if (!Array.isArray(data)) throw new InputError(`${file}: expected a JSON array of {"id", "attributes"} records`);
    return data.map((item: unknown, i) => {
      const o = item as { id?: unknown; attributes?: unknown };
      if (
        typeof o !== 'object' ||
        o === null ||
        (typeof o.id !== 'string' && typeof o.id !== 'number') ||
        String(o.id) === ''
      ) {
        throw new InputError(`${file}: record ${i} has no "id" (string or number)`);
      }
      const attributes = o.attributes ?? {};
      if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes)) {
        throw new InputError(`${file}: record ${i} ("${String(o.id)}"): "attributes" must be an object`);
      }
      return { id: String(o.id), attributes: attributes as Record<string, unknown> };
    });
  }
  const rows = csvRows(text, file);
  const header = rows[0];
  const idCol = header ? header.indexOf('id') : -1;
  if (!header || idCol < 0) throw new InputError(`${file}: the CSV has no "id" column in its header`);
  return rows.slice(1).map((row, i) => {
    const id = row[idCol] ?? '';
    if (id === '') throw new InputError(`${file}: line ${i + 2} has an empty id`);
    const attributes: Record<string, unknown> = {};
    header.forEach((name, c) => {
      if (c !== idCol && row[c] !== undefined && row[c] !== '') attributes[name] = row[c];
    });
    return { id, attributes };
  });
}

/** Truth pairs; an account-account pair counts in either order. */
function pairKey(a: string, b: string, bothAccounts: boolean): string {
  return bothAccounts && b < a ? `${b}\u0000${a}` : `${a}\u0000${b}`;
}

function loadTruth(file: string, accountIds: Set<string>): Set<string> {
  const rows = csvRows(readText(file, 'truth'), file);
  const truth = new Set<string>();
  rows.forEach((row, i) => {
    if (i === 0 && row[0] === 'accountId') return;
    if (row.length < 2 || !row[0] || !row[1])
      throw new InputError(`${file}: line ${i + 1} is not "accountId,candidateId"`);
    truth.add(pairKey(row[0], row[1], accountIds.has(row[1])));
  });
  return truth;
}

interface Summary {
  identities: number;
  accounts: number;
  duplicates: number;
  accountsWithDuplicates: number;
  pairsCompared: number;
  pairs: Record<string, number>;
  candidatesMean: number;
  candidatesMax: number;
  accountsMissingMandatory: number;
  accountsWithoutValues: number;
  truncated: number;
  fullScans: Record<string, number>;
  buildMs: number;
  matchMs: number;
  truthPairs?: number;
  truePositives?: number;
  precision?: number;
  recall?: number;
  model: string;
  probabilityThreshold?: number;
  parameters?: ModelParameters;
  sweep?: SweepPoint[];
  /** What the data says about the configuration (correlated attributes, no evidence, candidates per account). */
  warnings?: string[];
}

function summarise(
  result: MatchResult,
  kept: Map<string, PotentialDuplicate[]>,
  cut: { above: number; truncated: number },
  accountIds: Set<string>,
  truth: Set<string> | undefined,
): Summary {
  const s = result.stats;
  let duplicates = 0;
  let tp = 0;
  for (const list of kept.values()) {
    for (const d of list) {
      duplicates++;
      if (truth?.has(pairKey(d.accountId, d.candidateId, accountIds.has(d.candidateId)))) tp++;
    }
  }
  // Pairs collected below the configured threshold (for the sweep) are below-threshold outcomes;
  // pairs above it that --top-k cut are counted as truncated only.
  const belowThreshold = s.pairs.matched - cut.above;
  const summary: Summary = {
    model: 'rules',
    identities: s.baseline,
    accounts: s.accounts,
    duplicates,
    accountsWithDuplicates: [...kept.values()].filter((l) => l.length > 0).length,
    pairsCompared: s.pairsCompared,
    pairs: { ...s.pairs, matched: duplicates, below_threshold: s.pairs.below_threshold + belowThreshold },
    candidatesMean: Math.round(s.candidatesMean * 100) / 100,
    candidatesMax: s.candidatesMax,
    accountsMissingMandatory: s.accountsMissingMandatory,
    accountsWithoutValues: s.accountsWithoutValues,
    truncated: cut.truncated,
    fullScans: { ...s.fullScans } as Record<string, number>,
    buildMs: Math.round(s.buildMs),
    matchMs: Math.round(s.matchMs),
  };
  if (truth) {
    summary.truthPairs = truth.size;
    summary.truePositives = tp;
    summary.precision = duplicates > 0 ? Math.round((tp / duplicates) * 10000) / 10000 : 1;
    summary.recall = truth.size > 0 ? Math.round((tp / truth.size) * 10000) / 10000 : 1;
  }
  return summary;
}

function summaryText(s: Summary): string {
  const lines = [
    `identities ${s.identities}, accounts ${s.accounts}; model ${s.model}${s.probabilityThreshold !== undefined ? `, probability threshold ${s.probabilityThreshold}` : ''}`,
    `potential duplicates ${s.duplicates} on ${s.accountsWithDuplicates} accounts (dropped beyond --top-k: ${s.truncated})`,
    `pairs scored ${s.pairsCompared} (candidates per account: mean ${s.candidatesMean}, max ${s.candidatesMax})`,
    `  matched ${s.pairs.matched}, below threshold ${s.pairs.below_threshold}, mandatory failed ${s.pairs.mandatory_failed}, value missing ${s.pairs.value_missing}`,
    `accounts missing a mandatory value ${s.accountsMissingMandatory}, with no comparable value ${s.accountsWithoutValues}`,
    `full scans ${JSON.stringify(s.fullScans)}; index build ${s.buildMs} ms, matching ${s.matchMs} ms`,
  ];
  if (s.precision !== undefined) {
    lines.push(`truth: ${s.truthPairs} pairs, ${s.truePositives} found; precision ${s.precision}, recall ${s.recall}`);
  }
  if (s.parameters) lines.push(...parameterLines(s.parameters));
  if (s.sweep) lines.push(...sweepLines(s.sweep, s.probabilityThreshold));
  if (s.warnings?.length) lines.push('configuration warnings:', ...s.warnings.map((w) => `  ${w}`));
  return lines.join('\n') + '\n';
}

/** The key a threshold applies to: the probability, or for the rules model the overall score / 100. */
function scored(list: Iterable<PotentialDuplicate[]>, isCorrect?: (d: PotentialDuplicate) => boolean): ScoredPair[] {
  const out: ScoredPair[] = [];
  for (const l of list) {
    for (const d of l) {
      const pair: ScoredPair = {
        accountId: d.accountId,
        candidateId: d.candidateId,
        value: d.probability ?? d.score / 100,
        weight: d.matchWeight ?? d.score,
      };
      if (d.explanation) {
        pair.why = d.explanation
          .map((e) => `${e.attribute}: ${e.level} ${e.weight >= 0 ? '+' : ''}${e.weight}`)
          .join('; ');
      }
      if (isCorrect) pair.correct = isCorrect(d);
      out.push(pair);
    }
  }
  return out;
}

export async function runMatch(argv: string[], io: MatchIo): Promise<number> {
  try {
    const opts = readOptions(argv);
    if (opts === 'help') {
      io.stdout(USAGE);
      return 0;
    }
    const config = parseJson(readText(opts.config, 'config'), opts.config);
    if (typeof config !== 'object' || config === null || Array.isArray(config))
      throw new InputError(`${opts.config}: the config must be a JSON object`);
    const settings = parseMatchingSettings(config as Record<string, unknown>);
    if (settings.attributes.length === 0)
      throw new InputError(`${opts.config}: no matching attributes configured (matching.attributes is empty)`);
    const identities = loadRecords(opts.identities, 'identities');
    const accounts = loadRecords(opts.accounts, 'accounts');
    const accountIds = new Set(accounts.map((a) => a.id));
    const truth = opts.truth ? loadTruth(opts.truth, accountIds) : undefined;

    const probabilistic = settings.model === 'probabilistic';
    const configured = probabilistic ? (settings.probabilityThreshold as number) : undefined;
    // Probabilistic: collect the pairs down to the sweep floor; the output keeps those at the threshold.
    // Every core from DEFAULT_MIN_RECORDS records (identities + accounts); in-thread below.
    const matcher = buildRunMatcher(
      configured !== undefined ? { ...settings, probabilityThreshold: Math.min(configured, SWEEP_FLOOR) } : settings,
    );
    let result: MatchResult;
    try {
      matcher.addBaseline(identities);
      // Every candidate first: --top-k cuts only what passes the threshold, so that a pair below it is
      // never counted as cut, nor a cut pair as below the threshold (the matcher's own cut sees the floor).
      result = await matcher.match(accounts, { topK: Number.POSITIVE_INFINITY });
    } finally {
      await matcher.close();
    }
    const kept = new Map<string, PotentialDuplicate[]>();
    const cut = { above: 0, truncated: 0 };
    for (const [id, list] of result.duplicates) {
      const above = configured !== undefined ? list.filter((d) => (d.probability ?? 0) >= configured) : list;
      cut.above += above.length;
      const best = opts.topK !== undefined ? above.slice(0, opts.topK) : above;
      cut.truncated += above.length - best.length;
      if (best.length) kept.set(id, best);
    }

    let chunk = '';
    for (const list of kept.values()) {
      for (const d of list) {
        chunk +=
          JSON.stringify({
            accountId: d.accountId,
            candidateId: d.candidateId,
            candidateKind: d.candidateKind,
            score: d.score,
            scores: d.scores,
            ...(d.probability !== undefined ? { probability: d.probability } : {}),
            ...(d.matchWeight !== undefined ? { matchWeight: d.matchWeight } : {}),
            ...(d.explanation ? { explanation: d.explanation } : {}),
          }) + '\n';
        if (chunk.length > 65536) {
          io.stdout(chunk);
          chunk = '';
        }
      }
    }
    if (chunk) io.stdout(chunk);
    const summary = summarise(result, kept, cut, accountIds, truth);
    summary.model = settings.model ?? 'rules';
    const parameters = matcher.parameters();
    const isCorrect = truth
      ? (d: PotentialDuplicate) => truth.has(pairKey(d.accountId, d.candidateId, accountIds.has(d.candidateId)))
      : undefined;
    const pairs = scored(result.duplicates.values(), isCorrect);
    const points = sweep(
      pairs,
      sweepThresholds(settings.model ?? 'rules', probabilistic ? SWEEP_FLOOR : 0, configured),
      truth?.size,
    );
    if (probabilistic) {
      summary.probabilityThreshold = configured;
      if (parameters) summary.parameters = parameters;
      summary.sweep = points;
    }
    const warnings = configurationWarnings(probabilistic ? parameters : undefined, result.stats);
    if (warnings.length > 0) summary.warnings = warnings.map((w) => w.message);
    io.stderr(opts.summaryJson ? JSON.stringify(summary) + '\n' : summaryText(summary));
    if (opts.report) {
      const page = renderReportPage(reportData(settings, summary, pairs, points, parameters, truth));
      try {
        writeFileSync(opts.report, page);
      } catch (e) {
        throw new InputError(
          `cannot write the report ${opts.report}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`,
        );
      }
      io.stderr(`report written to ${opts.report}\n`);
    }
    return 0;
  } catch (e) {
    if (e instanceof InputError || isFusionError(e, 'MATCHING_INVALID') || isFusionError(e, 'INPUT_INVALID')) {
      io.stderr(`fusion-proxy match: ${e.message}\n`);
      if (e instanceof UsageError) io.stderr(USAGE);
      return 2;
    }
    throw e;
  }
}

export async function run(argv: string[]): Promise<number> {
  return runMatch(argv, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) });
}
