/**
 * bench:aggregation-memory: where an aggregation's memory goes (issue 11, item 4).
 *
 * Each aggregation runs in a child process of its own with --expose-gc, against the simulator in
 * another process (its memory is not counted). The child forces a full GC before every reading:
 * at the end of each phase (connector accounts read; identity baseline loaded; the probabilistic
 * estimate stored; the first item emitted, every index built) and about 40 times while it lists and
 * emits (the largest of these readings is the run's "live heap"). Peak RSS is the
 * kernel's (getrusage maxrss), worker threads included.
 *
 * Series (same seed, matching main configuration on the simulator's attributes):
 *  - baseline: B identities, 2,000 new accounts: bytes per baseline record (the matcher with its
 *    indexes, after a GC) and peak RSS as the baseline grows; projected (or, with --1m, measured)
 *    at 1M baseline records against the goal of issue 11 (worker RSS <= 2 GB), for a first run and
 *    for every later run, which also reads and emits the tenant's ~1M connector accounts (projected
 *    with the refresh series' RSS per emitted account);
 *  - refresh: a fixed baseline, N connector accounts that already exist (the steady state: every
 *    source account belongs to one): bytes per emitted account, against what bare Maps and Sets of
 *    strings hold per account (its key, its source account ids, its unique values: "the least" until
 *    the index numbered its ids, issue 27; it now keeps less) measured in the same run;
 *  - create (rules) and create (probabilistic, full run: new accounts held until every source is
 *    read): a fixed baseline, N new accounts. Each created account joins the matcher (later
 *    accounts are matched against it), so it costs about one baseline record.
 * Then the matcher's breakdown per structure at one baseline size, built in-process from the same
 * identities: ids, each attribute's prepared values, each index, the probabilistic model's state.
 *
 * Usage: npm run bench:aggregation-memory [-- --quick] [-- --1m] [-- --threads 2 [-- --partitions]] [-- --pod-mib 2048]
 *   [-- --series baseline,refresh,create] [-- --models rules,probabilistic] [-- --baseline-sizes 50000,300000]
 *   [-- --later-sizes 1000000]
 *   --quick: smaller series (about a minute); --1m: also run 1M baseline records (several minutes,
 *   ~6 GB for the simulator); --threads: matching threads of the aggregation (default 1: the owner's
 *   own memory; each further thread holds its own copy of the prepared baseline); --partitions: rules runs
 *   decided in partitions (threads - 1 of them, each holding its classes' records); --heap-mb: the
 *   aggregation's V8 heap limit (default: what the image's bin/heap-limit.sh gives a pod of --pod-mib,
 *   default 2048, the goal's; see imageHeapMb).
 * --later-sizes: also a later run of each model per size B: B identities, B managed accounts, each
 * with its connector account, and 2,000 new accounts (measured at 1M, it replaces the projection of
 * every later run's RSS).
 * BENCH_PAGE_MS: the simulator answers every listing page (accounts, identity search) this much later, as
 * a platform's latency does (default 0): the run's time then includes what waiting on pages costs.
 * TRACE_HEAP=1 prints the aggregation's heap after a forced GC at each of its log lines.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { prepareAttribute } from '../src/core/matching/attribute-runtime';
import { buildMatcher } from '../src/core/matching/matcher';
import type { MatchRecord } from '../src/core/matching/types';
import type { AggregationSummary } from '../src/core/aggregation/aggregation-summary';
import { COUNTERS_KEY } from '../src/core/aggregation/counter-store';
import type { CommandType } from '../src/core/command-types';
import type { Logger, LogFn } from '../src/core/ports/logger';
import type { PlatformFactory, PlatformSession } from '../src/core/ports/platform';
import { RecordingReviewQueue } from '../src/core/ports/review-queue';
import { createPlatformFactory } from '../src/platform/create-platform-client';
import { createProductionRunner } from '../src/runtime/production-runner';
import { generateTenant, startSimulator, type Tenant } from '../src/simulator';
import { SIMULATOR_MATCHING, aggregationConfig, fusionInstanceId, simulatorConnection } from './simulated-aggregation';

const MiB = 2 ** 20;
const GOAL_RSS_AT_1M = 2e9;
/** Bytes per emitted (refreshed) account above the least a run must keep per account. */
const GOAL_REFRESH_OVERHEAD = 1.5;

type Model = 'rules' | 'probabilistic';

interface Scenario {
  series: 'baseline' | 'refresh' | 'create' | 'later';
  identities: number;
  /** Accounts on the managed sources (half each). */
  accounts: number;
  /** Connector accounts exist for every managed account (steady state) instead of none (first run). */
  fused: boolean;
  /** With `fused`: the last this many managed accounts are left without one (new accounts of a later run). */
  unfused?: number;
  model: Model;
  threads: number;
  /** Rules runs decided in partitions (threads - 1 of them: issue 27). */
  partitions: boolean;
}

interface SimInfo {
  baseurl: string;
  clientId: string;
  clientSecret: string;
  fusionSourceId: string;
  connectorAccounts: number;
}

interface Reading {
  heap: number;
  rss: number;
}

interface RunResult {
  scenario: Scenario;
  emitted: number;
  created: number;
  updated: number;
  toReview: number;
  connectorAccounts: number;
  baselineIdentities: number;
  start: Reading;
  afterConnectorAccounts: Reading;
  afterBaseline: Reading;
  /** Largest heap after a full GC while the run listed or emitted (about 40 readings). */
  liveHeap: number;
  peakRss: number;
  seconds: number;
}

// ---------------------------------------------------------------- the simulator (child process)

/** The previous run's output: one connector account per managed source account, with its unique values. */
function fuse(tenant: Tenant, unfused = 0): number {
  const fusion = tenant.meta.fusionSourceId!;
  const managed = new Set(tenant.meta.managedSourceIds);
  const sourceName = new Map([...tenant.sources.values()].map((s) => [s.id, s.name]));
  const now = tenant.now();
  const accounts = [...tenant.accounts.values()].filter((a) => managed.has(a.sourceId) && !a.isMachine);
  let n = 0;
  for (const a of accounts.slice(0, Math.max(0, accounts.length - unfused))) {
    const key = randomUUID();
    const display = String(a.attributes['displayName'] ?? a.name);
    tenant.addAccount({
      id: tenant.newId(),
      sourceId: fusion,
      nativeIdentity: key,
      name: display,
      disabled: false,
      locked: false,
      isMachine: false,
      manuallyCorrelated: false,
      attributes: {
        ...a.attributes,
        id: key,
        name: display,
        accounts: [a.id],
        sources: [sourceName.get(a.sourceId)],
        login: `${String(a.attributes['uid'])}`.toLowerCase(),
        employeeId: `F${String(++n).padStart(7, '0')}`,
      },
      created: now,
      modified: now,
    });
  }
  // The counter the previous run stored with them, as a run does (counter-store.ts).
  const own = tenant.source(fusion);
  own.connectorAttributes = { ...own.connectorAttributes, [COUNTERS_KEY]: { employeeId: n } };
  return n;
}

async function simulate(s: Scenario): Promise<void> {
  const tenant = generateTenant({
    seed: 11,
    identities: s.identities,
    accountsPerSource: Math.ceil(s.accounts / 2),
    duplicateRate: 0.1,
    machineRate: 0,
    disabledSource: false,
  });
  const connectorAccounts = s.fused ? fuse(tenant, s.unfused) : 0;
  const sim = await startSimulator({ tenant, rateLimit: false, logRequests: false });
  // A platform's latency on every listing page (accounts and the identity search); none by default.
  const pageMs = Number(process.env['BENCH_PAGE_MS'] ?? 0);
  if (!(pageMs >= 0)) throw new Error(`BENCH_PAGE_MS: a number of milliseconds, got ${process.env['BENCH_PAGE_MS']}`);
  if (pageMs > 0) {
    sim.control.injectFault({ method: 'GET', pathTemplate: '/v3/accounts', latencyMs: pageMs, times: Infinity });
    sim.control.injectFault({ method: 'POST', pathTemplate: '/v3/search', latencyMs: pageMs, times: Infinity });
  }
  const info: SimInfo = {
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    fusionSourceId: tenant.meta.fusionSourceId!,
    connectorAccounts,
  };
  process.send?.(info);
}

// ---------------------------------------------------------------- the aggregation (child process)

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

function reading(): Reading {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

/** Calls `each` on every item a listing of the session yields (to read memory as the run goes). */
function observed(factory: PlatformFactory, each: () => void): PlatformFactory {
  return (config, ctx) => {
    const session = factory(config, ctx);
    return new Proxy(session, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'listAccounts' && prop !== 'searchIdentities') return v;
        return async function* (...args: unknown[]) {
          for await (const item of (v as (...a: unknown[]) => AsyncIterable<unknown>).apply(target, args)) {
            each();
            yield item;
          }
        };
      },
    }) as PlatformSession;
  };
}

async function aggregate(info: SimInfo, s: Scenario): Promise<void> {
  const start = reading();
  let afterConnectorAccounts = start;
  let afterBaseline = start;
  let liveHeap = start.heap;
  let items = 0;
  // About 40 readings per run (a full GC of a large heap takes a while), at least every 5,000 items.
  const every = Math.max(5000, Math.ceil((s.identities + 2 * s.accounts + info.connectorAccounts) / 40));
  const tick = (): void => {
    if (++items % every === 0) liveHeap = Math.max(liveHeap, reading().heap);
  };
  // Phase ends are read where the run logs them (synchronously, before the next phase starts).
  const info$: LogFn = (a: unknown, b?: unknown) => {
    const msg = typeof a === 'string' ? a : String(b ?? '');
    if (/^Read \d+ connector accounts/.test(msg)) afterConnectorAccounts = reading();
    if (/^Identity baseline/.test(msg)) afterBaseline = reading();
    // The estimate derives the model's state for every record (its peak with few new accounts,
    // where no tick reads the heap after the baseline).
    if (/^Probabilistic matching: the estimated parameters/.test(msg)) liveHeap = Math.max(liveHeap, reading().heap);
    if (process.env['TRACE_HEAP']) {
      const r = reading();
      console.error(`[heap ${Math.round(r.heap / MiB)} MiB, rss ${Math.round(r.rss / MiB)} MiB] ${msg.slice(0, 120)}`);
    }
  };
  const noop: LogFn = () => undefined;
  const logger: Logger = { error: noop, warn: info$, info: info$, debug: process.env['TRACE_HEAP'] ? info$ : noop };
  const base = {
    ...simulatorConnection(info),
    // No run lock: its renewal needs the event loop, which a full probabilistic run's estimate over
    // 100,000 new accounts on one thread blocks for longer than the lock's TTL (the run then stops).
    concurrencyCheckEnabled: false,
  };
  const factory = createPlatformFactory();
  const spConnectorInstanceId = await fusionInstanceId(factory, base, info);
  const summaries: AggregationSummary[] = [];
  const runner = createProductionRunner({
    platform: observed(factory, tick),
    reviewQueue: () => new RecordingReviewQueue(),
    onAggregationSummary: (x) => summaries.push(x),
    matchingThreads: s.threads,
    ...(s.partitions ? { matchingPartitions: true } : {}),
  });
  const config = aggregationConfig(base, spConnectorInstanceId, s.model);
  const t0 = performance.now();
  const ctx = { signal: new AbortController().signal, logger, jobId: 'bench', progress: () => undefined };
  let emitted = 0;
  for await (const _ of runner('std:account:list' as CommandType, {}, config, ctx)) {
    // The first item comes after the first batch is matched: every index is built by then.
    if (++emitted === 1) liveHeap = Math.max(liveHeap, reading().heap);
    tick();
  }
  const seconds = (performance.now() - t0) / 1000;
  const sum = summaries[0]!;
  const result: RunResult = {
    scenario: s,
    emitted,
    created: sum.accountsCreated,
    updated: sum.accountsUpdated,
    toReview: sum.potentialDuplicates,
    connectorAccounts: info.connectorAccounts,
    baselineIdentities: sum.baselineIdentities,
    start,
    afterConnectorAccounts,
    afterBaseline,
    liveHeap,
    peakRss: process.resourceUsage().maxRSS * 1024,
    seconds,
  };
  // Exit explicitly: pooled sockets of the platform client would keep the child alive.
  process.send?.(result, undefined, {}, () => process.exit(0));
}

// ---------------------------------------------------------------- the matcher's breakdown (child process)

interface BreakdownRow {
  structure: string;
  bytes: number;
}

/** Identity records as the aggregation gets them: fresh objects and strings, as parsed from JSON. */
function identityRecords(n: number): MatchRecord[] {
  const tenant = generateTenant({ seed: 11, identities: n, accountsPerSource: 0, disabledSource: false });
  const out: MatchRecord[] = [];
  for (const i of tenant.identities.values()) {
    out.push(JSON.parse(JSON.stringify({ id: i.id, attributes: i.attributes })) as MatchRecord);
  }
  return out;
}

function heapNow(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Keeps what is being measured reachable until it is read. */
const sink: unknown[] = [];

/** Heap the structures `build` returns keep alive, after a GC. */
function cost(build: () => unknown): number {
  const before = heapNow();
  sink.push(build());
  const after = heapNow();
  sink.pop();
  return after - before;
}

function breakdown(n: number): void {
  // The records' own attribute strings stay alive (the structures may reference them): only what the
  // structures add is counted.
  const records = identityRecords(n);
  const rows: BreakdownRow[] = [];
  rows.push({
    structure: 'an id string (32 hex characters, as parsed)',
    bytes: cost(() => records.map((r) => JSON.parse(JSON.stringify(r.id)) as string)),
  });
  rows.push({ structure: 'ids array (8 B per slot, strings shared)', bytes: cost(() => records.map((r) => r.id)) });
  for (const rule of SIMULATOR_MATCHING) {
    let rt: ReturnType<typeof prepareAttribute> | undefined;
    const values = cost(() => (rt = prepareAttribute(rule, records)));
    rows.push({ structure: `${rule.attribute} (${rule.algorithm}): prepared values`, bytes: values });
    const rtKept = rt!;
    const index = cost(() => rtKept.index());
    rows.push({ structure: `${rule.attribute} (${rule.algorithm}): index postings`, bytes: index });
    rt = undefined;
  }
  const total = (model: Model): number =>
    cost(() => {
      const m = buildMatcher({ attributes: SIMULATOR_MATCHING, reviewTopK: 10, model });
      m.addBaseline(records);
      // Builds the indexes (first match()).
      m.match([records[0]!]);
      return m;
    });
  const rulesTotal = total('rules');
  const probTotal = total('probabilistic');
  rows.push({
    structure: 'probabilistic model per-record state (total minus rules total)',
    bytes: probTotal - rulesTotal,
  });
  process.send?.({ n, rows, rulesTotal, probTotal }, undefined, {}, () => process.exit(0));
}

// ---------------------------------------------------------------- the bench (main process)

/** A child that exited before it reported (V8 aborts with SIGABRT when the heap reaches its limit). */
class ChildDied extends Error {
  constructor(
    readonly role: string,
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`${role} child exited with ${signal ?? String(code)}`);
  }
}

/**
 * The aggregation's V8 heap limit (MiB): what the image's start (bin/heap-limit.sh) gives node in a
 * pod of `podMib` memory limit, found by running that script against a cgroup directory that says
 * so. Node by itself would take half the limit; the script gives it NODE_HEAP_PERCENT (default 75).
 * The goal's 2 GB pod therefore gets 1,536 MiB, and so does the aggregation here unless `--heap-mb`
 * says otherwise. A larger limit lets V8 put off its major collections: at 8 GiB the peak RSS of the
 * same run held twice its live heap in garbage.
 */
function imageHeapMb(podMib: number): number {
  const root = mkdtempSync(join(tmpdir(), 'bench-cgroup-'));
  try {
    writeFileSync(join(root, 'memory.max'), `${podMib * MiB}\n`);
    const script = join(__dirname, '..', '..', 'bin', 'heap-limit.sh');
    const out = execFileSync(script, ['echo'], { env: { ...process.env, CGROUP_ROOT: root }, encoding: 'utf8' });
    const mb = /--max-old-space-size=(\d+)/.exec(out)?.[1];
    if (mb === undefined) throw new Error(`bin/heap-limit.sh gives a ${podMib} MiB pod no heap size: "${out.trim()}"`);
    return Number(mb);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

let podMib = 2048;
let aggregateHeapMb = 0;

function child<T>(args: string[], heavy = false): { proc: ChildProcess; message: Promise<T> } {
  const heapMb = args[0] === '--aggregate' ? aggregateHeapMb : heavy ? 16384 : 8192;
  const proc = fork(__filename, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: ['--expose-gc', `--max-old-space-size=${heapMb}`],
  });
  const message = new Promise<T>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as T));
    proc.once('exit', (code, signal) => reject(new ChildDied(args[0]!, code, signal)));
  });
  return { proc, message };
}

async function run(s: Scenario): Promise<RunResult> {
  const sim = child<SimInfo>(['--simulate', JSON.stringify(s)], true);
  try {
    const info = await sim.message;
    const agg = child<RunResult>(['--aggregate', JSON.stringify(info), JSON.stringify(s)], true);
    const r = await agg.message;
    await new Promise((res) => (agg.proc.exitCode !== null ? res(undefined) : agg.proc.once('exit', res)));
    return r;
  } finally {
    sim.proc.kill('SIGTERM');
  }
}

/**
 * What bare Maps and Sets of strings hold per existing connector account: its key, its source account
 * id, its unique values (the reference of the goal; the index keeps its ids as numbers, less than this).
 */
function leastPerAccount(n: number): number {
  const before = heapNow();
  const owner = new Map<string, string>();
  const login = new Set<string>();
  const employee = new Set<string>();
  const keys = new Set<string>();
  for (let i = 0; i < n; i++) {
    // Fresh strings shaped like the simulator's: a 32-hex account id, a UUID key, a login, an employee id.
    const id = JSON.parse(`"${(i * 2654435761).toString(16).padStart(32, '0')}"`) as string;
    const key = randomUUID();
    owner.set(id, key);
    keys.add(key);
    login.add(`given${i}.surname${i % 977}`);
    employee.add(`F${String(i).padStart(7, '0')}`);
  }
  sink.push([owner, login, employee, keys]);
  const bytes = heapNow() - before;
  sink.pop();
  return bytes / n;
}

const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
const mib = (x: number): string => `${(x / MiB).toFixed(0)} MiB`;

function table(results: RunResult[]): void {
  console.log(
    '  | series | model | identities | accounts | emitted (created/updated/review) | connector accts read | heap after conn. accts | heap after baseline | live heap (max) | peak RSS | time |',
  );
  console.log('  |---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const s = r.scenario;
    console.log(
      `  | ${s.series} | ${s.model} | ${fmt(s.identities)} | ${fmt(s.accounts)} | ${fmt(r.emitted)} (${fmt(r.created)}/${fmt(r.updated)}/${fmt(r.toReview)}) | ${fmt(r.connectorAccounts)} | ${mib(r.afterConnectorAccounts.heap)} | ${mib(r.afterBaseline.heap)} | ${mib(r.liveHeap)} | ${mib(r.peakRss)} | ${r.seconds.toFixed(1)} s |`,
    );
  }
}

/** Least-squares slope and intercept of y over x. */
function fit(points: [number, number][]): { slope: number; intercept: number } {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  const slope = den === 0 ? 0 : num / den;
  return { slope, intercept: my - slope * mx };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--simulate') return simulate(JSON.parse(argv[1]!) as Scenario);
  if (argv[0] === '--aggregate') {
    return aggregate(JSON.parse(argv[1]!) as SimInfo, JSON.parse(argv[2]!) as Scenario);
  }
  if (argv[0] === '--breakdown') {
    breakdown(Number(argv[1]));
    return;
  }
  const quick = argv.includes('--quick');
  const oneM = argv.includes('--1m');
  const flag = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const threads = Number(flag('--threads') ?? 1);
  const partitions = argv.includes('--partitions');
  if (partitions && threads < 2)
    throw new Error("--partitions: with --threads 2 or more (the run's own thread counts)");
  podMib = Number(flag('--pod-mib') ?? podMib);
  if (!Number.isInteger(podMib) || podMib < 256) throw new Error('--pod-mib: a whole number of MiB, 256 or more');
  const heapGiven = flag('--heap-mb');
  aggregateHeapMb = heapGiven === undefined ? imageHeapMb(podMib) : Number(heapGiven);
  if (!Number.isInteger(aggregateHeapMb) || aggregateHeapMb < 64)
    throw new Error('--heap-mb: a whole number of MiB, 64 or more');
  const heapOrigin =
    heapGiven === undefined ? `what the image gives a pod with a ${fmt(podMib)} MiB memory limit` : '--heap-mb';
  const series = new Set([
    ...(flag('--series') ?? 'baseline,refresh,create').split(','),
    ...(flag('--later-sizes') !== undefined ? ['later'] : []),
  ]);
  const fixedB = quick ? 10_000 : 25_000;
  const baselineSizes =
    flag('--baseline-sizes')?.split(',').map(Number) ??
    (quick ? [20_000, 60_000] : [50_000, 150_000, 300_000, ...(oneM ? [1_000_000] : [])]);
  const laterSizes = flag('--later-sizes')?.split(',').map(Number) ?? [];
  if (laterSizes.some((b) => !Number.isInteger(b) || b < 1000))
    throw new Error('--later-sizes: whole numbers of identities, 1000 or more');
  const accountSizes = quick ? [10_000, 40_000] : [25_000, 100_000, 300_000];
  const createSizes = quick ? [10_000, 40_000] : [25_000, 100_000];
  const models = (['rules', 'probabilistic'] as const).filter((m) =>
    (flag('--models') ?? 'rules,probabilistic').split(',').includes(m),
  );
  const scenarios: Scenario[] = [
    ...models.flatMap((model) =>
      baselineSizes.map((b) => ({
        series: 'baseline' as const,
        identities: b,
        accounts: 2000,
        fused: false,
        model,
        threads,
        partitions,
      })),
    ),
    ...accountSizes.map((n) => ({
      series: 'refresh' as const,
      identities: fixedB,
      accounts: n,
      fused: true,
      model: 'rules' as const,
      threads,
      partitions,
    })),
    // A later run of a tenant of B identities: B managed accounts with their connector accounts, and
    // 2,000 new ones (so the run matches: its indexes are built, as in a first run).
    ...models.flatMap((model) =>
      laterSizes.map((b) => ({
        series: 'later' as const,
        identities: b,
        accounts: b + 2000,
        fused: true,
        unfused: 2000,
        model,
        threads,
        partitions,
      })),
    ),
    ...models.flatMap((model) =>
      createSizes.map((n) => ({
        series: 'create' as const,
        identities: fixedB,
        accounts: n,
        fused: false,
        model,
        threads,
        partitions,
      })),
    ),
  ].filter((x) => series.has(x.series));
  console.log(
    `bench:aggregation-memory: std:account:list against the simulator (separate process), batch size 250, ${threads} matching thread(s)${partitions ? ' deciding rules runs in partitions' : ''}; heap = used + external after a forced GC; the aggregation's heap limit ${fmt(aggregateHeapMb)} MiB (${heapOrigin})`,
  );
  const results: RunResult[] = [];
  /** Runs whose aggregation died (out of memory at its heap limit): a missed goal, not a crash of the bench. */
  const died: Scenario[] = [];
  for (const s of scenarios) {
    let r: RunResult;
    try {
      r = await run(s);
    } catch (e) {
      if (!(e instanceof ChildDied) || e.role !== '--aggregate') throw e;
      died.push(s);
      console.log(
        `  ${s.series} ${s.model} ${fmt(s.identities)} identities x ${fmt(s.accounts)} accounts: the aggregation died (${e.signal ?? `exit code ${String(e.code)}`}${e.signal === 'SIGABRT' ? `: V8 aborts when the live heap reaches its limit, ${fmt(aggregateHeapMb)} MiB here` : ''})`,
      );
      continue;
    }
    results.push(r);
    console.log(
      `  ${s.series} ${s.model} ${fmt(s.identities)} identities x ${fmt(s.accounts)} accounts: live heap ${mib(r.liveHeap)}, peak RSS ${mib(r.peakRss)}, ${r.seconds.toFixed(1)} s`,
    );
  }
  console.log('');
  table(results);
  let missed = died.length;

  // Refresh: bytes per emitted account against the least per account.
  const refresh = results.filter((r) => r.scenario.series === 'refresh');
  let rssPerConnectorAccount: number | undefined;
  if (refresh.length >= 2) {
    const perEmitted = fit(refresh.map((r) => [r.emitted, r.liveHeap]));
    const perConnector = fit(refresh.map((r) => [r.connectorAccounts, r.afterConnectorAccounts.heap - r.start.heap]));
    const rssPerEmitted = fit(refresh.map((r) => [r.emitted, r.peakRss]));
    const least = leastPerAccount(200_000);
    const refreshOk = perEmitted.slope <= GOAL_REFRESH_OVERHEAD * least;
    if (!refreshOk) missed++;
    console.log(`\nrefresh (existing connector accounts, ${fmt(fixedB)} identities):`);
    console.log(`  heap per connector account read (index + unique values): ${fmt(perConnector.slope)} B`);
    console.log(
      `  live heap per emitted account: ${fmt(perEmitted.slope)} B; bare Maps and Sets of strings per account (key, source account id, 2 unique values, same run): ${fmt(least)} B; ratio ${(perEmitted.slope / least).toFixed(2)}   goal <= ${GOAL_REFRESH_OVERHEAD}  ${refreshOk ? 'ok' : 'MISSED'}`,
    );
    console.log(`  peak RSS per emitted account: ${fmt(rssPerEmitted.slope)} B`);
    rssPerConnectorAccount = rssPerEmitted.slope;
  }

  // Baseline: the matcher and its indexes per baseline record (slope of the live heap over the baseline size).
  for (const model of models) {
    const base = results.filter((r) => r.scenario.series === 'baseline' && r.scenario.model === model);
    const measured1m = base.find((r) => r.scenario.identities === 1_000_000);
    if (died.some((d) => d.series === 'baseline' && d.model === model && d.identities === 1_000_000)) {
      console.log(
        `\nbaseline records (identities), ${model}: peak RSS at 1M baseline records, first run: the run did not finish within a ${fmt(aggregateHeapMb)} MiB heap   goal <= 2 GB  MISSED`,
      );
    }
    if (died.some((d) => d.series === 'later' && d.model === model && d.identities === 1_000_000)) {
      console.log(
        `\nlater run, ${model}: 1M baseline records and 1M connector accounts: the run did not finish within a ${fmt(aggregateHeapMb)} MiB heap   goal <= 2 GB  MISSED`,
      );
    }
    const later1m = results.find(
      (r) => r.scenario.series === 'later' && r.scenario.model === model && r.scenario.identities === 1_000_000,
    );
    if (later1m) {
      const ok = later1m.peakRss <= GOAL_RSS_AT_1M;
      if (!ok) missed++;
      console.log(
        `\nlater run, ${model}: peak RSS at 1M baseline records and 1M connector accounts: ${(later1m.peakRss / 1e9).toFixed(2)} GB (measured; live heap ${mib(later1m.liveHeap)})   goal <= 2 GB  ${ok ? 'ok' : 'MISSED'}`,
      );
    }
    if (base.length < 2 && !measured1m) continue;
    const perRecord = fit(base.map((r) => [r.baselineIdentities, r.liveHeap]));
    const rssFit = fit(base.map((r) => [r.baselineIdentities, r.peakRss]));
    const rss1m = measured1m ? measured1m.peakRss : rssFit.intercept + rssFit.slope * 1e6;
    const rssOk = rss1m <= GOAL_RSS_AT_1M;
    if (!rssOk) missed++;
    console.log(`\nbaseline records (identities), ${model}, ${fmt(2000)} new accounts, ${threads} thread(s):`);
    if (base.length >= 2) {
      console.log(`  live heap per baseline record (slope):  ${fmt(perRecord.slope)} B`);
      console.log(`  peak RSS per baseline record (slope):   ${fmt(rssFit.slope)} B`);
    }
    console.log(
      `  peak RSS at 1M baseline records, first run: ${(rss1m / 1e9).toFixed(2)} GB (${measured1m ? 'measured' : 'projected from the slope'})   goal <= 2 GB  ${rssOk ? 'ok' : 'MISSED'}`,
    );
    if (later1m) continue;
    if (rssPerConnectorAccount === undefined) continue;
    // Identities come from connector accounts (the connector is authoritative): a tenant of 1M
    // identities has about 1M connector accounts, which every later run reads and emits.
    const steady = rss1m + 1e6 * rssPerConnectorAccount;
    const steadyOk = steady <= GOAL_RSS_AT_1M;
    if (!steadyOk) missed++;
    console.log(
      `  peak RSS at 1M baseline records and 1M connector accounts (every later run): ${(steady / 1e9).toFixed(2)} GB (projected: the above + 1M x the peak RSS per emitted account)   goal <= 2 GB  ${steadyOk ? 'ok' : 'MISSED'}`,
    );
  }

  for (const model of models) {
    const rows = results.filter((r) => r.scenario.series === 'create' && r.scenario.model === model);
    if (rows.length < 2) continue;
    const perRead = fit(rows.map((r) => [r.scenario.accounts, r.liveHeap]));
    const perCreated = fit(rows.map((r) => [r.created, r.liveHeap]));
    const rssPerRead = fit(rows.map((r) => [r.scenario.accounts, r.peakRss]));
    console.log(
      `\ncreate, ${model} (first run, ${fmt(fixedB)} identities): per new account read: live heap ${fmt(perRead.slope)} B, peak RSS ${fmt(rssPerRead.slope)} B; per created account (joins the matcher, like a baseline record): live heap ${fmt(perCreated.slope)} B`,
    );
  }

  const bn = quick ? 20_000 : 100_000;
  const bd = child<{ n: number; rows: BreakdownRow[]; rulesTotal: number; probTotal: number }>(
    ['--breakdown', String(bn)],
    true,
  );
  const b = await bd.message;
  console.log(`\nthe matcher's structures at ${fmt(b.n)} baseline records (in-process, heap after a GC):`);
  console.log('  | structure | bytes per record |');
  console.log('  |---|---|');
  for (const row of b.rows) console.log(`  | ${row.structure} | ${fmt(row.bytes / b.n)} |`);
  console.log(`  | matcher total, rules | ${fmt(b.rulesTotal / b.n)} |`);
  console.log(`  | matcher total, probabilistic | ${fmt(b.probTotal / b.n)} |`);

  if (missed > 0) {
    console.log(`\n${missed} goal(s) missed`);
    process.exitCode = 1;
  }
}

main().then(
  () => undefined,
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
