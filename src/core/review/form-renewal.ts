/**
 * The expiry policy: a form that expires unanswered is sent again once (round 2, fresh expiry, a
 * warning in log and summary, announced in this run's notifications); after the second expiry the
 * account is reported as "review expired" in every run until an operator deletes the form.
 */
import type { FormInstance } from '../ports/review-platform';
import type { GroupReading, ReviewFormGroup } from './decisions';
import { INPUT } from './form-content';
import { recordReviewFormCreated } from './metrics';
import { DAY_MS, REVIEW_ROUNDS, type QueueContext } from './queue-context';
import { label, pendingEntry, reportNoReviewer } from './review-log';
import { noticeOf } from './review-notices';
import type { ReviewDecision } from './types';

export async function renewExpired(
  c: QueueContext,
  d: Extract<ReviewDecision, { kind: 'expired' }>,
  g: ReviewFormGroup,
  reading: GroupReading,
): Promise<ReviewDecision> {
  const entry = {
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
  const latest = reading.latest as FormInstance;
  const reviewerIds = resolution.reviewers.map((r) => r.id);
  // Owed before it exists: a run that stops after the renewal still gets it announced.
  await c.notices.owe(reviewerIds, d.accountId);
  await c.notices.save();
  for (const late of reading.overdue) await c.o.review.setFormInstanceState(late.id, 'CANCELLED', c.opts);
  const expiresAt = new Date(c.now().getTime() + c.o.expirationDays * DAY_MS).toISOString();
  const round = d.rounds + 1;
  const inst = await c.o.review.createFormInstance(
    {
      formDefinitionId: latest.formDefinitionId || (g.definitions[0]?.id ?? ''),
      recipientIds: reviewerIds,
      expire: expiresAt,
      formInput: { ...latest.formInput, [INPUT.round]: String(round) },
      createdBySourceId: c.o.fusionSource.id,
    },
    c.opts,
  );
  g.instances.push(inst);
  recordReviewFormCreated();
  const renewed: ReviewDecision = {
    ...d,
    renewed: true,
    expiresAt,
    reviewers: inst.recipientIds.length ? inst.recipientIds : reviewerIds,
  };
  c.stats.expired.push({ ...entry, renewed: true, expiresAt });
  c.stats.pending.push(pendingEntry(renewed, inst.state, c.now(), expiresAt, inst.url));
  c.log.warn(
    { accountId: d.accountId, round, expiresAt, reviewers: renewed.reviewers.length },
    `Review form expired unanswered: the review of ${label(d)} was sent again (round ${round} of ${REVIEW_ROUNDS}) to ${renewed.reviewers.length} reviewer(s); it expires ${expiresAt}`,
  );
  c.notices.add(noticeOf(d, inst));
  return renewed;
}
