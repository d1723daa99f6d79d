/**
 * What bench:quality measures of one configuration on one labelled set: pair precision and recall,
 * the review forms (an account with at least one pair) and their precision, top-1, candidates scored
 * per account, time, and recall / false forms by kind of record.
 */
import { buildMatcher, type MatchResult, parseMatchingSettings } from '../src/core/matching';
import type { MatchingSettings } from '../src/core/matching';
import { type Labelled, truthPairs } from './quality-data';

export function settings(matching: Record<string, unknown>): MatchingSettings {
  return parseMatchingSettings({ matching });
}

export interface Quality {
  pairPrecision: number;
  pairRecall: number;
  f1: number;
  forms: number;
  formPrecision: number;
  top1: number;
  /** Candidate pairs scored per account: mean and max. */
  candidatesMean: number;
  candidatesMax: number;
  ms: number;
  cpuMs: number;
  byKind: Map<string, [found: number, total: number]>;
  /** Accounts without a true match (new people, namesakes) that got a form, by kind. */
  falseForms: Map<string, [forms: number, total: number]>;
  prior?: number;
}

export interface Run {
  result: MatchResult;
  /** Wall time, ms. */
  ms: number;
  /** CPU time of this process, ms: matching is one thread, so what it costs whatever else runs. */
  cpuMs: number;
  prior?: number;
}

export function run(set: Labelled, config: Record<string, unknown>): Run {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const m = buildMatcher(settings(config));
  m.addBaseline(set.identities);
  const result = m.match(set.accounts, { topK: Infinity });
  const cpu = process.cpuUsage(c0);
  return { result, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, prior: m.parameters()?.prior };
}

export function truthOf(set: Labelled): Set<string> {
  return new Set(truthPairs(set).map(([account, candidate]) => `${account}|${candidate}`));
}

export function measure(set: Labelled, truth: Set<string>, config: Record<string, unknown>): Quality {
  const { result, ms, cpuMs, prior } = run(set, config);
  let tp = 0;
  let predicted = 0;
  let forms = 0;
  let goodForms = 0;
  let top1 = 0;
  const hasTruth = new Set<string>();
  for (const t of truth) hasTruth.add(t.slice(0, t.indexOf('|')));
  const foundAccounts = new Set<string>();
  for (const [account, list] of result.duplicates) {
    forms++;
    let anyTrue = false;
    list.forEach((d, i) => {
      predicted++;
      if (truth.has(`${account}|${d.candidateId}`)) {
        tp++;
        anyTrue = true;
        if (i === 0) top1++;
      }
    });
    if (anyTrue) {
      goodForms++;
      foundAccounts.add(account);
    }
  }
  const byKind = new Map<string, [number, number]>();
  const falseForms = new Map<string, [number, number]>();
  for (const a of set.accounts) {
    const kind = set.kind.get(a.id)!;
    const into = hasTruth.has(a.id) ? byKind : falseForms;
    const hit = hasTruth.has(a.id) ? foundAccounts.has(a.id) : result.duplicates.has(a.id);
    const e = into.get(kind) ?? [0, 0];
    e[1]++;
    if (hit) e[0]++;
    into.set(kind, e);
  }
  const pairPrecision = predicted > 0 ? tp / predicted : 1;
  const pairRecall = truth.size > 0 ? tp / truth.size : 1;
  return {
    pairPrecision,
    pairRecall,
    f1: pairPrecision + pairRecall > 0 ? (2 * pairPrecision * pairRecall) / (pairPrecision + pairRecall) : 0,
    forms,
    formPrecision: forms > 0 ? goodForms / forms : 1,
    top1: goodForms > 0 ? top1 / goodForms : 1,
    candidatesMean: result.stats.candidatesMean,
    candidatesMax: result.stats.candidatesMax,
    ms,
    cpuMs,
    byKind,
    falseForms,
    prior,
  };
}

/**
 * Share of true pairs the matcher scores at all (its candidates: the blocking, then the model): the
 * same list at the lowest probability threshold lists every scored pair. A true pair outside it is
 * one no threshold and no weight can find; the rest of the missed pairs scored below the threshold.
 */
export function blockingRecall(set: Labelled, truth: Set<string>, config: Record<string, unknown>): number {
  const m = buildMatcher(settings({ ...config, probabilityThreshold: Number.MIN_VALUE }));
  m.addBaseline(set.identities);
  const { duplicates } = m.match(set.accounts, { topK: Infinity });
  let kept = 0;
  for (const [account, list] of duplicates) for (const d of list) if (truth.has(`${account}|${d.candidateId}`)) kept++;
  return truth.size > 0 ? kept / truth.size : 1;
}

export const f3 = (x: number): string => x.toFixed(3);

export const ROW_HEADER =
  'set              config          pairP   pairR   F1      forms  formP   top1    cand/acc  max     prior   ms';

export function row(set: string, config: string, q: Quality): string {
  return [
    set.padEnd(16),
    config.padEnd(15),
    f3(q.pairPrecision),
    ' ',
    f3(q.pairRecall),
    ' ',
    f3(q.f1),
    ' ',
    String(q.forms).padStart(5),
    '',
    f3(q.formPrecision),
    ' ',
    f3(q.top1),
    ' ',
    q.candidatesMean.toFixed(1).padStart(8),
    '',
    String(q.candidatesMax).padStart(6),
    ' ',
    q.prior !== undefined ? q.prior.toFixed(3) : '  -  ',
    ' ',
    q.ms.toFixed(0),
  ].join(' ');
}

export function kindLines(label: string, q: Quality): string[] {
  const list = (m: Map<string, [number, number]>): string =>
    [...m]
      .sort()
      .map(([k, [f, t]]) => `${k} ${f}/${t}`)
      .join(', ');
  return [
    `  ${label} recall by kind (accounts found/total): ${list(q.byKind)}`,
    `  ${label} forms for people without a match (forms/accounts): ${list(q.falseForms)}`,
  ];
}

/**
 * Share of true pairs that share an identifier (employee number, e-mail address or its local part):
 * the others rest on names alone, which namesakes share too (what no model can tell apart).
 */
export function identifiedShare(set: Labelled, truth: Set<string>): number {
  const byId = new Map<string, Record<string, unknown>>();
  for (const r of [...set.identities, ...set.accounts]) byId.set(r.id, r.attributes);
  const local = (v: unknown): string => (typeof v === 'string' ? v.toLowerCase().split('@')[0]! : '');
  let shared = 0;
  for (const t of truth) {
    const [a, b] = t.split('|') as [string, string];
    const ra = byId.get(a)!;
    const rb = byId.get(b)!;
    const emp = ra.employeeNumber !== undefined && ra.employeeNumber === rb.employeeNumber;
    const mail = local(ra.email) !== '' && local(ra.email) === local(rb.email);
    if (emp || mail) shared++;
  }
  return truth.size > 0 ? shared / truth.size : 1;
}
