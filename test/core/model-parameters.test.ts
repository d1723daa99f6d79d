/**
 * The probabilistic model's parameters across runs: a full aggregation estimates and stores them on the
 * connector source; a limited run reuses them (also with fresh Redis-side state); the next full run
 * re-estimates them. The estimation itself is the matching engine's (test/matching): here the run's matcher
 * (buildRunMatcher) is wrapped so that what the aggregation passes to it, and stores from it, can be observed.
 */
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import { MODEL_PARAMETERS_KEY, readStoredParameters } from '../../src/core/aggregation/model-parameters';
import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type * as MatcherModule from '../../src/core/matching/matcher';
import type { Matcher } from '../../src/core/matching/matcher';
import { type AsyncMatcher, inThread } from '../../src/core/matching/parallel/async-matcher';
import { parseMatchingSettings } from '../../src/core/matching';
import type { MatcherOptions, MatchingSettings, ModelParameters } from '../../src/core/matching/types';
import { sourceLockKey } from '../../src/core/ports/run-lock';
import { MemoryRunLock } from '../../src/locks/memory-run-lock';
import { collect, context, failure, harness, type Harness, type LogLine } from './support';

const matching = {
  model: 'probabilistic',
  attributes: [
    { attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: false },
    { attribute: 'email', algorithm: 'exact', threshold: 100, mandatory: false },
  ],
};

const calls: Array<MatcherOptions | undefined> = [];
let realModel = false;
/** Candidate pairs the stand-in reports per new account when it estimates. */
let pairsPerAccount = 1;
/** What each estimate was made from: records (baseline + new accounts) and new accounts. */
const estimateInputs: Array<{ records: number; accounts: number }> = [];
/** Runs inside the estimate (or the first match of a limited run), e.g. to take the run lock away. */
let duringMatch: (() => void) | undefined;
let estimates = 0;

function estimate(records: number): ModelParameters {
  estimates++;
  return {
    version: 1,
    estimatedAt: new Date(Date.UTC(2026, 0, estimates)).toISOString(),
    records,
    prior: 0.01,
    attributes: ['lastName', 'email'].map((attribute) => ({
      attribute,
      levels: [
        { level: 'exact', m: 0.9, u: 0.01 },
        { level: 'different', m: 0.1, u: 0.99 },
      ],
    })),
  };
}

/** The real matcher, recording the options it is built with and "estimating" at its first match. */
function observedBuild(settings: MatchingSettings, opts?: MatcherOptions): Matcher {
  calls.push(opts);
  const actual = jest.requireActual('../../src/core/matching/matcher') as typeof MatcherModule;
  if (realModel) return actual.buildMatcher(settings, opts);
  // The real engine finds the pairs; the parameters are this stand-in's.
  const real = actual.buildMatcher(settings);
  let baseline = 0;
  let params: ModelParameters | undefined = opts?.parameters;
  return {
    addBaseline: (records) => {
      const list = [...records];
      baseline += list.length;
      real.addBaseline(list);
    },
    match: (records, o) => {
      const hook = duringMatch;
      duringMatch = undefined;
      hook?.();
      params ??= settings.model === 'probabilistic' ? estimate(baseline + records.length) : undefined;
      return real.match(records, o);
    },
    estimate: (records) => {
      if (settings.model !== 'probabilistic' || params) return undefined;
      const hook = duringMatch;
      duringMatch = undefined;
      hook?.();
      estimateInputs.push({ records: baseline + records.length, accounts: records.length });
      params = estimate(baseline + records.length);
      return { parameters: params, accounts: records.length, candidatePairs: records.length * pairsPerAccount };
    },
    useParameters: (p) => {
      params = p;
    },
    parameters: () => params,
  };
}

/** The aggregation's matcher (asynchronous, possibly threaded) over the observed one, in-thread. */
function observedRunMatcher(settings: MatchingSettings, opts?: MatcherOptions): AsyncMatcher {
  return inThread(observedBuild(settings, opts));
}

jest.mock('../../src/core/matching/parallel/parallelism', () => ({
  ...jest.requireActual('../../src/core/matching/parallel/parallelism'),
  buildRunMatcher: (settings: MatchingSettings, opts?: MatcherOptions) => mockBuild(settings, opts),
}));
const mockBuild = observedRunMatcher;

beforeEach(() => {
  calls.length = 0;
  realModel = false;
  duringMatch = undefined;
  pairsPerAccount = 1;
  estimateInputs.length = 0;
});

function tenant(): Harness & { contractors: ReturnType<Harness['fake']['addSource']> } {
  const h = harness({ matching });
  const contractors = h.fake.addSource('Contractors');
  h.fake.addSource('LDAP');
  h.fake.addIdentity('grace', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' });
  h.fake.addAccount(contractors, 'C1', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
  return { ...h, contractors };
}

async function list(h: Harness, config: Record<string, unknown> = h.config, lines: LogLine[] = []) {
  return (await collect(createAccountListCommand(h.deps)({}, config, context(lines)))) as AccountItem[];
}

const stored = (h: Harness) =>
  h.fake.sources.get(h.own.id)?.connectorAttributes[MODEL_PARAMETERS_KEY] as ModelParameters | undefined;

/**
 * Run `run` kept the stored parameters `saved`: its summary says they came from the store, it logged
 * `info`, and the connector source still holds them.
 */
function expectKeptStored(
  h: Harness,
  run: number,
  saved: ModelParameters | undefined,
  lines: LogLine[],
  info: RegExp,
): void {
  expect(h.summaries[run]?.modelParameters).toEqual({
    source: 'stored',
    stored: false,
    estimatedAt: saved?.estimatedAt,
  });
  expect(lines.some((l) => l.level === 'info' && info.test(l.msg))).toBe(true);
  expect(stored(h)).toEqual(saved);
}

describe('probabilistic model parameters on the connector source', () => {
  test('a full run estimates and stores; a limited run after a state wipe reuses them; the next full run re-estimates', async () => {
    const h = tenant();
    const firstLines: LogLine[] = [];
    const first = await list(h, h.config, firstLines);
    expect(calls).toEqual([{}]);
    // One new account, nothing stored: stored, with a warning that so little data makes the probabilities unreliable.
    expect(firstLines.find((l) => l.level === 'warn')?.msg).toMatch(
      /estimated from only 1 new account\(s\) and 1 candidate pair\(s\) .* none usable were stored; the match probabilities are unreliable/,
    );
    const saved = stored(h);
    expect(saved?.records).toBe(2);
    expect(h.summaries[0]?.modelParameters).toEqual({
      source: 'estimated',
      stored: true,
      estimatedAt: saved?.estimatedAt,
    });
    h.fake.ingest(h.own.id, first);

    // Fresh process-side state (run lock, deps): only the platform remembers the parameters.
    h.deps = { ...h.deps, runLock: new MemoryRunLock() };
    h.fake.addAccount(h.contractors, 'C2', { firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com' });
    const patchesBefore = h.fake.patches.length;
    const lines: LogLine[] = [];
    const limited = await list(h, { ...h.config, aggregationBatchSize: 5 }, lines);
    expect(calls[1]).toEqual({ parameters: saved });
    expectKeptStored(h, 1, saved, lines, /parameters of the last full aggregation .* are reused/);
    expect(h.fake.patches.slice(patchesBefore).some((p) => MODEL_PARAMETERS_KEY in p.values)).toBe(false);
    h.fake.ingest(h.own.id, limited);

    // The next full run with 60 new accounts (60 candidate pairs) re-estimates from all of them.
    for (let i = 0; i < 60; i++) {
      h.fake.addAccount(h.contractors, `N${i}`, {
        firstName: 'New',
        lastName: `Person${i}`,
        email: `n${i}@example.com`,
      });
    }
    await list(h);
    expect(calls[2]).toEqual({});
    expect(stored(h)?.estimatedAt).not.toBe(saved?.estimatedAt);
    // Baseline: Grace and the identities of the two ingested connector accounts.
    expect(estimateInputs.at(-1)).toEqual({ records: 63, accounts: 60 });
    expect(stored(h)?.records).toBe(63);
    expect(h.summaries[2]?.modelParameters).toMatchObject({ source: 'estimated', stored: true });
  });

  test('a full run with processing batch size 1 estimates once, from the baseline and all its new accounts, before matching', async () => {
    const h = tenant();
    for (let i = 0; i < 9; i++) {
      h.fake.addAccount(h.contractors, `N${i}`, {
        firstName: 'New',
        lastName: `Person${i}`,
        email: `n${i}@example.com`,
      });
    }
    await list(h, { ...h.config, enableBatching: true, batchSize: 1 });
    // One identity, ten new accounts; the first batch alone would have been one account.
    expect(estimateInputs).toEqual([{ records: 11, accounts: 10 }]);
    expect(stored(h)?.records).toBe(11);
    expect(h.summaries[0]?.accountsCreated).toBe(10);
  });

  test('a full run that finds no new account to match keeps the stored parameters', async () => {
    const h = tenant();
    pairsPerAccount = 100;
    h.fake.ingest(h.own.id, await list(h));
    const saved = stored(h)!;
    const patchesBefore = h.fake.patches.length;
    const lines: LogLine[] = [];
    await list(h, h.config, lines);
    expect(estimateInputs).toHaveLength(1);
    expectKeptStored(
      h,
      1,
      saved,
      lines,
      /this full aggregation found no new account to match, too little to re-estimate the parameters; the stored ones .* are kept/,
    );
    expect(h.fake.patches.slice(patchesBefore).some((p) => MODEL_PARAMETERS_KEY in p.values)).toBe(false);
  });

  test('a full run whose estimate rests on too few new accounts or pairs keeps and uses the stored parameters', async () => {
    const h = tenant();
    pairsPerAccount = 100;
    h.fake.ingest(h.own.id, await list(h));
    const saved = stored(h)!;
    h.fake.addAccount(h.contractors, 'C2', { firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com' });
    const lines: LogLine[] = [];
    await list(h, h.config, lines);
    expect(estimateInputs).toHaveLength(2);
    expectKeptStored(
      h,
      1,
      saved,
      lines,
      /the estimate rests on only 1 new account\(s\) and 100 candidate pair\(s\), too little to re-estimate/,
    );
    expect(lines.some((l) => l.level === 'warn')).toBe(false);
  });

  test('a full run that lost its run lock while estimating stores nothing', async () => {
    const h = tenant();
    const key = sourceLockKey('acme.api.example.com', h.own.id);
    let clock = Date.now();
    const lock = new MemoryRunLock(() => clock);
    h.deps = { ...h.deps, runLock: lock };
    duringMatch = () => {
      // The lock expires while this run estimates, and another run takes it.
      clock += 3_600_000;
      void lock.acquire(key, 'other-run', 3_600_000);
    };
    const e = await failure(createAccountListCommand(h.deps)({}, h.config, context([])));
    expect(e).toMatchObject({ code: 'AGGREGATION_LOCK_LOST' });
    expect(calls).toEqual([{}]);
    expect(stored(h)).toBeUndefined();
    expect(await lock.holder(key)).toBe('other-run');
  });

  test('a limited run with nothing stored estimates from what it reads, warns, and stores nothing', async () => {
    const h = tenant();
    const lines: LogLine[] = [];
    await list(h, { ...h.config, aggregationBatchSize: 5 }, lines);
    expect(calls).toEqual([{}]);
    expect(h.summaries[0]?.modelParameters).toEqual({ source: 'estimated-from-part', stored: false });
    const warning = lines.find(
      (l) => l.level === 'warn' && /no usable stored parameters \(none are stored\)/.test(l.msg),
    );
    expect(warning?.msg).toMatch(/Run a full aggregation to estimate and store them/);
    expect(stored(h)).toBeUndefined();
  });

  test('parameters stored for other attributes are not reused', async () => {
    const h = tenant();
    h.fake.sources.get(h.own.id)!.connectorAttributes[MODEL_PARAMETERS_KEY] = {
      ...estimate(10),
      attributes: [{ attribute: 'displayName', levels: [{ level: 'exact', m: 0.9, u: 0.1 }] }],
    };
    const lines: LogLine[] = [];
    await list(h, { ...h.config, accountFilter: 'attributes.lastName ne "nobody"' }, lines);
    expect(calls).toEqual([{}]);
    expect(lines.find((l) => l.level === 'warn')?.msg).toMatch(
      /estimated for the attributes displayName, the configuration matches on email, lastName/,
    );
  });

  test('hand-edited parameters out of range (m=50, u=1e-300) are refused with a warning and not used', async () => {
    const h = tenant();
    h.fake.sources.get(h.own.id)!.connectorAttributes[MODEL_PARAMETERS_KEY] = {
      ...estimate(10),
      attributes: ['lastName', 'email'].map((attribute) => ({
        attribute,
        levels: [
          { level: 'exact', m: 50, u: 1e-300 },
          { level: 'different', m: 0.1, u: 0.99 },
        ],
      })),
    };
    const lines: LogLine[] = [];
    await list(h, { ...h.config, aggregationBatchSize: 5 }, lines);
    expect(calls).toEqual([{}]);
    expect(h.summaries[0]?.modelParameters).toEqual({ source: 'estimated-from-part', stored: false });
    expect(lines.find((l) => l.level === 'warn')?.msg).toMatch(
      /no usable stored parameters \(lastName level exact: m 50 and u 1e-300 must be in \(0, 1\]\)/,
    );
  });

  test('stored parameters that do not fit the comparison levels: a limited run warns and estimates (real model)', async () => {
    realModel = true;
    const h = tenant();
    h.fake.sources.get(h.own.id)!.connectorAttributes[MODEL_PARAMETERS_KEY] = estimate(10);
    const lines: LogLine[] = [];
    const items = await list(h, { ...h.config, aggregationBatchSize: 5 }, lines);
    expect(items.length).toBeGreaterThan(0);
    expect(calls[0]).toEqual({ parameters: expect.objectContaining({ records: 10 }) });
    expect(h.summaries[0]?.modelParameters).toEqual({ source: 'estimated-from-part', stored: false });
    expect(lines.find((l) => l.level === 'warn')?.msg).toMatch(
      /the stored parameters do not fit the matching configuration; this limited run estimates them/,
    );
  });

  test('the rules model neither reads nor stores parameters', async () => {
    const h = tenant();
    await list(h, { ...h.config, matching: { ...matching, model: 'rules' } });
    expect(calls).toEqual([{}]);
    expect(h.summaries[0]?.modelParameters).toBeUndefined();
    expect(stored(h)).toBeUndefined();
  });
});

describe('readStoredParameters', () => {
  const settings = parseMatchingSettings({ matching });
  test.each([
    [undefined, 'none are stored'],
    ['text', 'the stored value is not an object'],
    [{ ...estimate(1), version: 2 }, 'unknown version 2'],
    [{ ...estimate(1), prior: 'high' }, 'estimatedAt, records or prior is missing'],
    [{ ...estimate(1), attributes: {} }, 'attributes is not a list'],
    [
      { ...estimate(1), attributes: [{ attribute: 'email', levels: [{ level: 'exact', m: '0.9', u: 0.1 }] }] },
      'a level of email is malformed',
    ],
    [{ ...estimate(1), prior: 0 }, 'prior 0 is not between 0 and 1 (exclusive)'],
    [{ ...estimate(1), prior: 1 }, 'prior 1 is not between 0 and 1 (exclusive)'],
    [{ ...estimate(1), prior: Infinity }, 'estimatedAt, records or prior is missing'],
    [
      { ...estimate(1), attributes: [{ attribute: 'email', levels: [{ level: 'exact', m: 50, u: 1e-300 }] }] },
      'email level exact: m 50 and u 1e-300 must be in (0, 1]',
    ],
    [
      { ...estimate(1), attributes: [{ attribute: 'email', levels: [{ level: 'exact', m: 0.9, u: 0 }] }] },
      'email level exact: m 0.9 and u 0 must be in (0, 1]',
    ],
    [
      { ...estimate(1), attributes: [{ attribute: 'email', levels: [{ level: 'exact', m: -0.1, u: 0.5 }] }] },
      'email level exact: m -0.1 and u 0.5 must be in (0, 1]',
    ],
  ])('malformed value %# is refused: %s', (raw, problem) => {
    expect(readStoredParameters({ [MODEL_PARAMETERS_KEY]: raw }, settings)).toEqual({ problem });
  });

  test('well-formed parameters for the configured attributes are returned as stored', () => {
    const p = estimate(3);
    expect(readStoredParameters({ [MODEL_PARAMETERS_KEY]: p }, settings)).toEqual({ parameters: p });
  });
});
