/**
 * Platform calls a run spends on review forms (#27 item 3), counted by the simulator.
 *
 *   npm run bench:review-calls                       (3,000 identities, two managed sources)
 *   BENCH_IDENTITIES=1000 npm run bench:review-calls (smaller)
 *
 * One std:account:list through the production runner against a simulated tenant, twice on two
 * simulators with the same seed: once with review forms (the platform's custom forms, reviewers,
 * notification workflow) and once with the forms off (the recording queue). The difference of the
 * simulator's counters is what the reviews cost. Goals (exit 1 on a miss): <= 1.5 platform calls
 * per review form; 0 per-form identity look-ups (the reviewer resolution's calls, at most 3 per
 * source with forms, are per run and shown apart); notifications <= reviewers.
 *
 * Then a form's later life (lifecycle() below): calls per answer applied and per form sent again.
 *
 * Then the forms' pace against a platform that answers each form instance in BENCH_FORM_LATENCY_MS
 * (25 ms; BENCH_LATENCY_IDENTITIES identities, 1,000): the same run with "Max concurrent requests" 1
 * (one form at a time, as every run created them before 2026-11-29) and 20, each less the run without
 * forms. This bench's own goal: >= 5x faster with 20 in flight.
 */
import type { AggregationSummary } from '../src/core/aggregation/aggregation-summary';
import type { CommandContext } from '../src/core/command-runner';
import type { CommandType } from '../src/core/command-types';
import { silentLogger } from '../src/core/ports/logger';
import { RecordingReviewQueue } from '../src/core/ports/review-queue';
import { createProductionRunner } from '../src/runtime/production-runner';
import { startSimulator, type RunningSimulator, type SimulatorCounters } from '../src/simulator';

const IDENTITIES = Number(process.env.BENCH_IDENTITIES ?? 3000);
const SEED = 27;
const GOAL_CALLS_PER_FORM = 1.5;
/** Reviewer resolution per source: the access profile, its holders, the owner. */
const RESOLUTION_CALLS_PER_SOURCE = 3;
const IDENTITY_TEMPLATES = ['POST /v3/search', 'GET /v3/identities/{id}', 'GET /v3/identities'];
const FORM_LATENCY_MS = Number(process.env.BENCH_FORM_LATENCY_MS ?? 25);
const LATENCY_IDENTITIES = Number(process.env.BENCH_LATENCY_IDENTITIES ?? 1000);
const GOAL_IN_FLIGHT_SPEED_UP = 5;

interface RunOptions {
  forms: boolean;
  identities?: number;
  maxConcurrentRequests?: number;
  /** Injected before every form instance's answer. */
  formLatencyMs?: number;
}

interface RunResult {
  counters: SimulatorCounters;
  summary: AggregationSummary;
  reviewers: number;
  sourcesWithForms: number;
  seconds: number;
}

async function run({ forms, identities = IDENTITIES, ...o }: RunOptions): Promise<RunResult> {
  return withSimulator(identities, async (sim) => {
    if (o.formLatencyMs)
      sim.control.injectFault({
        method: 'POST',
        pathTemplate: '/beta/form-instances',
        latencyMs: o.formLatencyMs,
        times: Number.POSITIVE_INFINITY,
      });
    return aggregate(sim, forms, o.maxConcurrentRequests);
  });
}

async function withSimulator<T>(identities: number, f: (sim: RunningSimulator) => Promise<T>): Promise<T> {
  const sim: RunningSimulator = await startSimulator({
    seed: SEED,
    tenant: { identities, accountsPerSource: Math.round(identities * 0.8) },
    rateLimit: false,
    logRequests: false,
  });
  try {
    return await f(sim);
  } finally {
    await sim.close();
  }
}

/** One std:account:list on `sim`; its counters are this run's alone. */
async function aggregate(sim: RunningSimulator, forms: boolean, maxConcurrentRequests = 20): Promise<RunResult> {
  const fusion = sim.tenant.source(sim.tenant.meta.fusionSourceId as string);
  const summaries: AggregationSummary[] = [];
  const runner = createProductionRunner({
    onAggregationSummary: (s) => summaries.push(s),
    ...(forms ? {} : { reviewQueue: () => new RecordingReviewQueue() }),
  });
  const config = {
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    spConnectorInstanceId: fusion.connectorAttributes['spConnectorInstanceId'],
    sources: ['Contractors', 'LDAP'],
    requestsPerSecond: 1000,
    maxConcurrentRequests,
    matching: {
      attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }],
      // The simulator's names send about two thirds of the accounts to review: past the flood guard,
      // which this bench must not measure.
      maxReviewShare: 1,
    },
  };
  const controller = new AbortController();
  const ctx: CommandContext = {
    logger: silentLogger,
    signal: controller.signal,
    jobId: `bench-${forms ? 'forms' : 'no-forms'}`,
    progress: () => undefined,
  };
  sim.control.resetLog();
  const started = Date.now();
  for await (const _ of runner('std:account:list' as CommandType, {}, config, ctx)) void _;
  const seconds = (Date.now() - started) / 1000;
  const instances = [...sim.tenant.formInstances.values()];
  const reviewers = new Set(instances.flatMap((i) => (i['recipients'] as Array<{ id: string }>).map((r) => r.id))).size;
  const sourcesWithForms = new Set(instances.map((i) => (i['formInput'] as Record<string, unknown>)['sourceName']))
    .size;
  const summary = summaries[0];
  if (!summary) throw new Error('the aggregation reported no summary');
  return { counters: sim.control.counters(), summary, reviewers, sourcesWithForms, seconds };
}

function diff(a: SimulatorCounters, b: SimulatorCounters, template: string): number {
  return (a.byTemplate[template] ?? 0) - (b.byTemplate[template] ?? 0);
}

async function main(): Promise<void> {
  const withForms = await run({ forms: true });
  const without = await run({ forms: false });
  const review = withForms.summary.review as { formsCreated: number; notificationsSent: number } | undefined;
  const forms = review?.formsCreated ?? 0;
  if (forms === 0) throw new Error('the run created no review form: nothing to measure');
  if (withForms.summary.potentialDuplicates !== without.summary.potentialDuplicates)
    throw new Error('the two runs disagree on the potential duplicates: the comparison would be meaningless');

  const total = withForms.counters.requests - without.counters.requests;
  const identityCalls = IDENTITY_TEMPLATES.reduce((s, t) => s + diff(withForms.counters, without.counters, t), 0);
  const resolution = RESOLUTION_CALLS_PER_SOURCE * withForms.sourcesWithForms;
  const perFormLookups = Math.max(0, identityCalls - resolution) / forms;
  const notifications = diff(withForms.counters, without.counters, 'POST /v3/workflows/{id}/test');
  const perForm = total / forms;

  const templates = new Set([
    ...Object.keys(withForms.counters.byTemplate),
    ...Object.keys(without.counters.byTemplate),
  ]);
  console.log(
    `bench:review-calls - ${IDENTITIES} identities, two managed sources, one std:account:list (seed ${SEED})`,
  );
  console.log(
    `  run with forms ${withForms.seconds.toFixed(1)} s, without ${without.seconds.toFixed(1)} s; ${forms} review forms, ${withForms.summary.accountsEmitted} items`,
  );
  console.log('  calls the reviews added, by route:');
  for (const t of [...templates].sort()) {
    const d = diff(withForms.counters, without.counters, t);
    if (d !== 0) console.log(`    ${t.padEnd(40)} ${String(d).padStart(6)}`);
  }
  const rows: Array<[string, string, string, boolean]> = [
    ['platform calls per review form', perForm.toFixed(3), `<= ${GOAL_CALLS_PER_FORM}`, perForm <= GOAL_CALLS_PER_FORM],
    [
      'per-form identity look-ups',
      `${perFormLookups.toFixed(3)} (identity calls ${identityCalls}, reviewer resolution <= ${resolution})`,
      '0',
      perFormLookups === 0,
    ],
    [
      'notifications vs reviewers',
      `${notifications} notifications, ${withForms.reviewers} reviewers`,
      'notifications <= reviewers',
      notifications <= withForms.reviewers,
    ],
  ];
  rows.push(...(await lifecycle()));
  rows.push(await formsPace());
  for (const [what, figure, goal, ok] of rows)
    console.log(`  ${what.padEnd(38)} ${figure}   goal ${goal}   ${ok ? 'PASS' : 'MISS'}`);
  if (rows.some((r) => !r[3])) process.exit(1);
}

/** The review routes: forms, their outbox on the connector's source, the messages. */
const FORM_ROUTE = /^(\S+ \/beta\/form-|PATCH \/v3\/sources\/\{id\}$|\S+ \/v3\/workflows)/;

/** Calls a run spent on the review routes, printed by route. */
function formCalls(label: string, c: SimulatorCounters): number {
  let total = 0;
  const routes = Object.entries(c.byTemplate).filter(([t]) => FORM_ROUTE.test(t));
  console.log(`  ${label}, calls on the review routes:`);
  for (const [t, n] of routes.sort()) {
    console.log(`    ${t.padEnd(40)} ${String(n).padStart(6)}`);
    total += n;
  }
  return total;
}

/**
 * A form's later life, on two tenants of the same seed. One: a reviewer answers every form ("not a
 * duplicate") and the next run applies the answers and closes the forms. Two: every form expires
 * unanswered, the next run sends it again, then every form is answered and the run after applies the
 * answers. Calls on the review routes per form in each run, less the new forms the run creates (one
 * call each). Goals (this bench's): <= 1.5 per form in each, as for a new form.
 */
async function lifecycle(): Promise<Array<[string, string, string, boolean]>> {
  const answerAll = (sim: RunningSimulator): void => {
    for (const inst of sim.tenant.formInstances.values())
      if (inst['state'] === 'ASSIGNED') sim.control.completeFormInstance(String(inst['id']), { newIdentity: true });
  };
  const applied = (label: string, r: RunResult): { calls: number; decided: number } => {
    const review = r.summary.review as { decided: unknown[]; formsCreated: number };
    const decided = review.decided.length;
    const calls = formCalls(`${label}: ${decided} answers applied, ${review.formsCreated} new forms`, r.counters);
    return { calls: calls - review.formsCreated, decided };
  };
  const first = await withSimulator(IDENTITIES, async (sim) => {
    await aggregate(sim, true);
    answerAll(sim);
    return applied('answered in round 1, the next run', await aggregate(sim, true));
  });
  const renewedThenAnswered = await withSimulator(IDENTITIES, async (sim) => {
    await aggregate(sim, true);
    sim.control.expireFormInstances();
    const second = await aggregate(sim, true);
    const review = second.summary.review as { expired: Array<{ renewed: boolean }> };
    const renewed = review.expired.filter((e) => e.renewed).length;
    const calls = formCalls(`expired unanswered, the next run: ${renewed} forms sent again`, second.counters);
    answerAll(sim);
    return { renewed, calls, answers: applied('then answered, the run after', await aggregate(sim, true)) };
  });
  const perForm = (calls: number, forms: number): string =>
    `${(calls / forms).toFixed(3)} (${calls} calls, ${forms} forms)`;
  const ok = (calls: number, forms: number): boolean => forms > 0 && calls / forms <= GOAL_CALLS_PER_FORM;
  const { renewed, calls, answers } = renewedThenAnswered;
  return [
    [
      'calls per answer applied',
      perForm(first.calls, first.decided),
      `<= ${GOAL_CALLS_PER_FORM}`,
      ok(first.calls, first.decided),
    ],
    ['calls per form sent again', perForm(calls, renewed), `<= ${GOAL_CALLS_PER_FORM}`, ok(calls, renewed)],
    [
      'calls per answer, form sent again',
      perForm(answers.calls, answers.decided),
      `<= ${GOAL_CALLS_PER_FORM}`,
      ok(answers.calls, answers.decided),
    ],
  ];
}

/** Forms per second against a platform with latency: one form at a time, and 20 in flight. */
async function formsPace(): Promise<[string, string, string, boolean]> {
  const at = { identities: LATENCY_IDENTITIES, formLatencyMs: FORM_LATENCY_MS };
  const without = await run({ forms: false, identities: LATENCY_IDENTITIES });
  const pace: Record<number, number> = {};
  let forms = 0;
  for (const inFlight of [1, 20]) {
    const r = await run({ forms: true, ...at, maxConcurrentRequests: inFlight });
    forms = (r.summary.review as { formsCreated: number } | undefined)?.formsCreated ?? 0;
    const formsS = r.seconds - without.seconds;
    pace[inFlight] = forms / formsS;
    console.log(
      `  ${forms} forms at ${FORM_LATENCY_MS} ms per form instance, ${inFlight} in flight: run ${r.seconds.toFixed(1)} s, ${without.seconds.toFixed(1)} s without forms: ${pace[inFlight]!.toFixed(0)} forms/s`,
    );
  }
  const speedUp = pace[20]! / pace[1]!;
  return [
    'forms/s, 20 in flight vs 1',
    `${speedUp.toFixed(1)}x (${pace[20]!.toFixed(0)} vs ${pace[1]!.toFixed(0)} forms/s)`,
    `>= ${GOAL_IN_FLIGHT_SPEED_UP}x (this bench's)`,
    speedUp >= GOAL_IN_FLIGHT_SPEED_UP,
  ];
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
