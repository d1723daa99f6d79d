/**
 * The expiry policy: a form that expires unanswered is sent again once (round 2, fresh expiry, a
 * warning in log and summary, announced in this run's notifications); after the second expiry the
 * account is reported as "review expired" in every run until an operator deletes the form.
 */
import type { FormInstance } from '../ports/review-platform';
import type { GroupReading, ReviewFormGroup } from './decisions';
import { INPUT } from './form-content';
import { inFlightInOrder } from './in-flight';
import { recordReviewFormCreated } from './metrics';
import { formsInFlight, fullTermExpiry, REVIEW_ROUNDS, type QueueContext } from './queue-context';
import { label, pendingEntry, reportNoReviewer } from './review-log';
import { noticeOf } from './review-notices';
import type { ReviewDecision, ReviewSummary } from './types';

/** An expired form to send again: what renewAll needs of it. */
export interface Renewal {
  renew: true;
  d: Extract<ReviewDecision, { kind: 'expired' }>;
  g: ReviewFormGroup;
  reading: GroupReading;
  reviewerIds: string[];
  entry: ExpiredEntry;
}

type ExpiredEntry = Omit<ReviewSummary['expired'][number], 'renewed' | 'expiresAt'>;

/**
 * An expired form's fate: reported as expired for good (after its last round, or with no reviewer left:
 * the decision is returned as it is), or a renewal for renewAll.
 */
export async function planRenewal(
  c: QueueContext,
  d: Extract<ReviewDecision, { kind: 'expired' }>,
  g: ReviewFormGroup,
  reading: GroupReading,
): Promise<ReviewDecision | Renewal> {
  const entry: ExpiredEntry = {
    accountId: d.accountId,
    accountName: d.accountName,
    sourceName: d.sourceName,
    since: d.since,
    rounds: d.rounds,
  };
  const defName = g.definitions[0]?.name;
  const instances = g.instances.map((i) => i.id);
  // A form of its own is deleted with its definition; a shared layout's instances are closed one by one.
  const action = defName
    ? `delete the form definition "${defName}"`
    : `close its form instance(s) ${instances.join(', ')} (PATCH /beta/form-instances/{id} adding formData.fusionClosed, see docs/review-forms.md)`;
  if (d.rounds >= REVIEW_ROUNDS) {
    c.stats.expired.push({ ...entry, renewed: false });
    c.log.warn(
      { accountId: d.accountId, rounds: d.rounds, since: d.since, ...(defName ? { form: defName } : { instances }) },
      `Review expired: the review of ${label(d)} expired ${d.rounds} times without an answer (first sent ${d.since}). The account stays out of the aggregation; ${action} to send a new review`,
    );
    return d;
  }
  const resolution = await c.reviewersFor(d.sourceName);
  if (resolution.reviewers.length === 0) {
    c.stats.expired.push({ ...entry, renewed: false });
    reportNoReviewer(c.stats, c.log, d, resolution.problems, 'The expired review form cannot be sent again');
    return d;
  }
  return { renew: true, d, g, reading, reviewerIds: resolution.reviewers.map((r) => r.id), entry };
}

/**
 * Sends the run's expired forms again (round + 1, fresh expiry). All are owed to their reviewers first,
 * in one outbox write (a run that stops after a renewal still gets it announced), then renewed
 * formsInFlight at a time (in-flight.ts). `renewed` is told each account's new decision, in order.
 */
export async function renewAll(
  c: QueueContext,
  plans: readonly Renewal[],
  renewed: (accountId: string, decision: ReviewDecision) => void,
): Promise<void> {
  if (plans.length === 0) return;
  for (const p of plans) await c.notices.owe(p.reviewerIds, p.d.accountId);
  await c.notices.save();
  await inFlightInOrder(
    plans,
    formsInFlight(c.o),
    (p) => sendAgain(c, p),
    ({ inst, expiresAt }, p) => renewed(p.d.accountId, recordRenewal(c, p, inst, expiresAt)),
  );
}

async function sendAgain(c: QueueContext, p: Renewal): Promise<{ inst: FormInstance; expiresAt: string }> {
  const latest = p.reading.latest as FormInstance;
  for (const late of p.reading.overdue) await c.o.review.setFormInstanceState(late.id, 'CANCELLED', c.opts);
  const expiresAt = fullTermExpiry(c);
  const inst = await c.o.review.createFormInstance(
    {
      formDefinitionId: latest.formDefinitionId || (p.g.definitions[0]?.id ?? ''),
      recipientIds: p.reviewerIds,
      expire: expiresAt,
      formInput: { ...latest.formInput, [INPUT.round]: String(p.d.rounds + 1) },
      createdBySourceId: c.o.fusionSource.id,
    },
    c.opts,
  );
  return { inst, expiresAt };
}

function recordRenewal(c: QueueContext, p: Renewal, inst: FormInstance, expiresAt: string): ReviewDecision {
  const { d } = p;
  const round = d.rounds + 1;
  p.g.instances.push(inst);
  recordReviewFormCreated();
  const renewed: ReviewDecision = {
    ...d,
    renewed: true,
    expiresAt,
    reviewers: inst.recipientIds.length ? inst.recipientIds : p.reviewerIds,
  };
  c.stats.expired.push({ ...p.entry, renewed: true, expiresAt });
  c.stats.pending.push(pendingEntry(renewed, inst.state, c.now(), expiresAt, inst.url));
  c.log.warn(
    { accountId: d.accountId, round, expiresAt, reviewers: renewed.reviewers.length },
    `Review form expired unanswered: the review of ${label(d)} was sent again (round ${round} of ${REVIEW_ROUNDS}) to ${renewed.reviewers.length} reviewer(s); it expires ${expiresAt}`,
  );
  c.notices.add(noticeOf(d, inst));
  return renewed;
}
