/**
 * Reading our review forms at the start of a run. States (aligned with the platform's custom-form
 * model and the simulator): COMPLETED is final (the first completed instance decides, whoever of
 * the reviewers answered); ASSIGNED, IN_PROGRESS and SUBMITTED are pending while their expiry lies
 * ahead; CANCELLED is what the platform does at expiry (and what a manual cancel does: both count
 * as "expired unanswered"); an open instance past its expiry counts as expired too, so a platform
 * that is late to cancel never makes us wait silently.
 */
import type { CallOptions } from '../ports/platform';
import {
  CLOSED_FORM_FIELD,
  type FormDefinition,
  type FormInstance,
  type ReviewPlatformPort,
} from '../ports/review-platform';
import { readFormAnswer } from './form-answer';
import { INPUT, storedCandidates } from './form-content';
import { FORM_NAME_PREFIX, accountIdOfForm, labelsOfForm, layoutOfForm } from './form-naming';
import type { ReviewDecision, ReviewFormRef } from './types';

/**
 * Every definition and instance of one account's review: the instances of shared layout definitions
 * that carry the account's id (`definitions` empty), or a definition of its own (forms created before
 * shared layouts).
 */
export interface ReviewFormGroup {
  accountId: string;
  definitions: FormDefinition[];
  instances: FormInstance[];
}

/** Our forms: per account id its group, and the shared layout definitions by layout key. */
export interface ReviewForms {
  groups: Map<string, ReviewFormGroup>;
  layouts: Map<string, FormDefinition>;
}

function isClosed(inst: FormInstance): boolean {
  const v = inst.formData[CLOSED_FORM_FIELD];
  return v !== undefined && v !== null && v !== '';
}

export interface GroupReading {
  /** Undefined for a definition without any instance (a run that stopped between the two calls). */
  decision?: ReviewDecision;
  /** Open instances whose expiry has passed (the renewal cancels them). */
  overdue: FormInstance[];
  /** The newest instance: its input is reused when the form is sent again. */
  latest?: FormInstance;
}

export const OPEN_STATES: ReadonlySet<string> = new Set(['ASSIGNED', 'IN_PROGRESS', 'SUBMITTED']);

function time(s: string | undefined): number {
  const t = s ? Date.parse(s) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

/** When an instance was created, in ms (0: unknown). */
export function createdAt(inst: FormInstance | undefined): number {
  return time(inst?.created);
}

/**
 * Our definitions (prefix search, then our fusion-source marker) and their instances, grouped by
 * account id; instances the connector closed are left out.
 */
export async function scanReviewForms(
  review: Pick<ReviewPlatformPort, 'searchFormDefinitions' | 'listFormInstances'>,
  fusionSourceId: string,
  opts?: CallOptions,
): Promise<ReviewForms> {
  const groups = new Map<string, ReviewFormGroup>();
  const layouts = new Map<string, FormDefinition>();
  for await (const def of review.searchFormDefinitions({ name: FORM_NAME_PREFIX, prefix: true }, opts)) {
    const layout = layoutOfForm(def, fusionSourceId);
    if (layout) {
      layouts.set(layout, def);
      continue;
    }
    const accountId = accountIdOfForm(def, fusionSourceId);
    if (!accountId) continue;
    let g = groups.get(accountId);
    if (!g) groups.set(accountId, (g = { accountId, definitions: [], instances: [] }));
    g.definitions.push(def);
  }
  for (const g of groups.values())
    for (const def of g.definitions)
      for await (const inst of review.listFormInstances(def.id, opts)) if (!isClosed(inst)) g.instances.push(inst);
  // Per account, when the newest instance the connector closed was created: it ended every review before it.
  const closedAt = new Map<string, number>();
  for (const def of layouts.values())
    for await (const inst of review.listFormInstances(def.id, opts)) {
      const accountId = inst.formInput[INPUT.accountId];
      if (typeof accountId !== 'string' || inst.formInput[INPUT.fusionSourceId] !== fusionSourceId) continue;
      if (isClosed(inst)) {
        closedAt.set(accountId, Math.max(closedAt.get(accountId) ?? 0, time(inst.created)));
        continue;
      }
      let g = groups.get(accountId);
      if (!g) groups.set(accountId, (g = { accountId, definitions: [], instances: [] }));
      g.instances.push(inst);
    }
  for (const [accountId, g] of groups) {
    const ended = closedAt.get(accountId) ?? 0;
    if (ended > 0) g.instances = g.instances.filter((i) => !supersededBy(i, ended));
    if (g.definitions.length === 0 && g.instances.length === 0) groups.delete(accountId);
    else g.instances.sort((a, b) => time(a.created) - time(b.created));
  }
  return { groups, layouts };
}

/**
 * An instance nobody can answer any more (cancelled or completed), created before an instance the
 * connector closed later: closing the newest instance of a review ends the older rounds with it, so a
 * review sent again costs one call to close, not one per round (ReviewFormQueue.deleteGroup).
 */
export function supersededBy(inst: FormInstance, closedCreatedAt: number): boolean {
  const created = time(inst.created);
  return (inst.state === 'CANCELLED' || inst.state === 'COMPLETED') && created > 0 && created < closedCreatedAt;
}

function refOf(g: ReviewFormGroup, latest: FormInstance | undefined): ReviewFormRef {
  const input = latest?.formInput ?? {};
  const labels = labelsOfForm(g.definitions[0]?.name ?? '');
  const str = (k: string, fallback: string): string =>
    typeof input[k] === 'string' && input[k] !== '' ? (input[k] as string) : fallback;
  const starts = [...g.definitions.map((d) => d.created), ...g.instances.map((i) => i.created)].filter(
    (s): s is string => time(s) > 0,
  );
  starts.sort((a, b) => time(a) - time(b));
  return {
    accountId: g.accountId,
    accountName: str(INPUT.accountName, labels.accountName),
    sourceName: str(INPUT.sourceName, labels.sourceName),
    since: starts[0] ?? '',
    reviewers: latest?.recipientIds ?? [],
  };
}

export function readGroup(g: ReviewFormGroup, now: Date): GroupReading {
  const latest = g.instances.at(-1);
  const overdue = g.instances.filter(
    (i) => OPEN_STATES.has(i.state) && i.expire !== undefined && time(i.expire) <= now.getTime(),
  );
  if (!latest) return { overdue };
  const ref = refOf(g, latest);

  const completed = g.instances
    .filter((i) => i.state === 'COMPLETED')
    .sort((a, b) => time(a.modified ?? a.created) - time(b.modified ?? b.created));
  const first = completed[0];
  if (first) {
    const answer = readFormAnswer(first.formData, storedCandidates(first.formInput));
    const decidedAt = first.modified ? { decidedAt: first.modified } : {};
    const decision: ReviewDecision =
      answer.kind === 'invalid'
        ? { ...ref, kind: 'invalid', reason: answer.reason }
        : answer.kind === 'new-identity'
          ? { ...ref, ...answer, formInstanceId: first.id, ...decidedAt }
          : { ...ref, ...answer, formInstanceId: first.id, ...decidedAt };
    return { decision, overdue, latest };
  }

  const live = g.instances.filter((i) => OPEN_STATES.has(i.state) && !overdue.includes(i));
  const newest = live.at(-1);
  if (newest) {
    const expiries = live
      .map((i) => i.expire)
      .filter((e): e is string => e !== undefined)
      .sort((a, b) => time(a) - time(b));
    return {
      decision: {
        ...ref,
        reviewers: [...new Set(live.flatMap((i) => i.recipientIds))],
        kind: 'pending',
        state: newest.state,
        ...(expiries.length ? { expiresAt: expiries.at(-1) } : {}),
        ...(newest.url ? { url: newest.url } : {}),
      },
      overdue,
      latest,
    };
  }
  const rounds = g.instances.filter((i) => i.state === 'CANCELLED' || overdue.includes(i)).length;
  return {
    decision: {
      ...ref,
      kind: 'expired',
      rounds,
      renewed: false,
      ...(latest.expire ? { expiresAt: latest.expire } : {}),
    },
    overdue,
    latest,
  };
}

export interface ReadDecisionsQuery {
  /** Id of the connector's own source: only its forms are read. */
  fusionSourceId: string;
  now?: Date;
}

/**
 * Per source account id, the state of its review. Read-only: it applies no policy (see
 * ReviewFormQueue.readDecisions for the run's version, which renews expired forms and cleans up).
 * A definition without instances has no entry.
 */
export async function readReviewDecisions(
  review: Pick<ReviewPlatformPort, 'searchFormDefinitions' | 'listFormInstances'>,
  query: ReadDecisionsQuery,
  opts?: CallOptions,
): Promise<Map<string, ReviewDecision>> {
  const now = query.now ?? new Date();
  const out = new Map<string, ReviewDecision>();
  for (const [id, g] of (await scanReviewForms(review, query.fusionSourceId, opts)).groups) {
    const d = readGroup(g, now).decision;
    if (d) out.set(id, d);
  }
  return out;
}
