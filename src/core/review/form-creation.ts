/**
 * Creating one account's review form: its definition and one instance addressed to every reviewer
 * (the first answer decides). The notification is not sent here: the run announces all its forms at
 * once (review-notices.ts), after the outbox says who is owed which.
 */
import type { FormInstance } from '../ports/review-platform';
import type { PendingReview } from '../ports/review-queue';
import type { ReviewFormGroup } from './decisions';
import { INPUT, buildFormContent, candidateDetails, rankCandidates, shownCount } from './form-content';
import { formDescription, formName } from './form-naming';
import { recordReviewFormCreated } from './metrics';
import { DAY_MS, type QueueContext } from './queue-context';
import { label, pendingEntry, type AccountRef } from './review-log';
import type { Reviewer } from './types';

export async function createReviewForm(
  c: QueueContext,
  review: PendingReview,
  reviewers: Reviewer[],
  forms: Map<string, ReviewFormGroup>,
): Promise<void> {
  const ref: AccountRef = {
    accountId: review.accountId,
    accountName: review.accountName,
    sourceName: review.sourceName,
  };
  const name = formName(review.accountName, review.sourceName, review.accountId);
  const ranked = rankCandidates(review.candidates);
  const details = candidateDetails(ranked.slice(0, shownCount(ranked.length, c.o.topK)));
  const content = buildFormContent(review, c.o.fusionSource.id, c.o.topK, details);
  const now = c.now();
  const asked = Date.parse(review.expiresAt);
  const expiresAt =
    !Number.isNaN(asked) && asked > now.getTime()
      ? new Date(asked).toISOString()
      : new Date(now.getTime() + c.o.expirationDays * DAY_MS).toISOString();
  const reviewerIds = reviewers.map((r) => r.id);

  const def = await c.o.review.createFormDefinition(
    {
      name,
      description: formDescription(content.description, c.o.fusionSource.id),
      ownerId: c.o.fusionSource.owner?.id ?? (reviewerIds[0] as string),
      formElements: content.formElements,
      formInput: content.formInputSchema,
    },
    c.opts,
  );
  let inst: FormInstance;
  try {
    inst = await c.o.review.createFormInstance(
      {
        formDefinitionId: def.id,
        recipientIds: reviewerIds,
        expire: expiresAt,
        formInput: { ...content.formInput, [INPUT.round]: '1' },
        createdBySourceId: c.o.fusionSource.id,
      },
      c.opts,
    );
  } catch (e) {
    // Without its instance the definition would only confuse the next run: best effort removal.
    await c.o.review.deleteFormDefinition(def.id, c.opts).catch(() => undefined);
    throw e;
  }
  forms.set(review.accountId, { accountId: review.accountId, definitions: [def], instances: [inst] });
  recordReviewFormCreated();
  const since = def.created ?? inst.created ?? now.toISOString();
  c.stats.formsCreated++;
  c.stats.created.push({
    ...ref,
    candidatesTotal: content.ranked.length,
    candidatesShown: content.shown,
    reviewers: reviewerIds,
    expiresAt,
  });
  c.stats.pending.push(pendingEntry({ ...ref, since, reviewers: reviewerIds }, inst.state, now, expiresAt, inst.url));
  c.log.info(
    {
      accountId: review.accountId,
      candidates: content.ranked.length,
      shown: content.shown,
      reviewers: reviewerIds.length,
      expiresAt,
    },
    `Review form created for ${label(ref)}: ${content.ranked.length} candidate(s), ${reviewerIds.length} reviewer(s)`,
  );
  c.notices.add({
    ...ref,
    ranked: content.ranked,
    details,
    expiresAt,
    round: 1,
    ...(inst.url ? { url: inst.url } : {}),
  });
}
