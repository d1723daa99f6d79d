/**
 * Creating a run's review forms: per account, one instance of its layout's shared definition
 * (form-layout.ts), addressed to every reviewer (the first answer decides), carrying the account and
 * its candidates.
 * The notification is not sent here: the run announces all its forms at once (review-notices.ts),
 * after the outbox says who is owed which.
 */
import { PerAccountLines } from '../logging/per-account-lines';
import type { FormDefinition, FormInstance } from '../ports/review-platform';
import type { PendingReview } from '../ports/review-queue';
import type { ReviewForms } from './decisions';
import { INPUT, buildFormContent, candidateDetails, rankCandidates, shownCount } from './form-content';
import { splitForm, layoutKey } from './form-layout';
import { layoutDescription, layoutName } from './form-naming';
import { recordReviewFormCreated } from './metrics';
import { inFlightInOrder } from './in-flight';
import { formsInFlight, fullTermExpiry, type QueueContext } from './queue-context';
import { label, pendingEntry, type AccountRef } from './review-log';
import type { Reviewer } from './types';

/** One form the run is creating: what its platform calls need and what its bookkeeping records. */
export interface PlannedForm {
  review: PendingReview;
  reviewers: Reviewer[];
}

/**
 * Creates the run's forms, `formsInFlight` at a time (in-flight.ts: recorded in submission order; after
 * a failure, the forms in flight are kept and recorded so the next run does not create them again).
 */
export async function createReviewForms(
  c: QueueContext,
  planned: readonly PlannedForm[],
  forms: ReviewForms,
): Promise<void> {
  const layouts = new Map<string, Promise<FormDefinition>>();
  const lines = new PerAccountLines(c.log, 'review forms created');
  await inFlightInOrder(
    planned,
    formsInFlight(c.o),
    (p) => startReviewForm(c, p, forms, layouts),
    (created) => recordReviewForm(c, created, forms, lines),
  );
}

interface CreatedForm {
  ref: AccountRef;
  content: ReturnType<typeof buildFormContent>;
  details: ReturnType<typeof candidateDetails>;
  reviewerIds: string[];
  expiresAt: string;
  now: Date;
  inst: FormInstance;
}

async function startReviewForm(
  c: QueueContext,
  { review, reviewers }: PlannedForm,
  forms: ReviewForms,
  layouts: Map<string, Promise<FormDefinition>>,
): Promise<CreatedForm> {
  const ref: AccountRef = {
    accountId: review.accountId,
    accountName: review.accountName,
    sourceName: review.sourceName,
  };
  const ranked = rankCandidates(review.candidates);
  const details = candidateDetails(ranked.slice(0, shownCount(ranked.length, c.o.topK)));
  const content = buildFormContent(review, c.o.fusionSource.id, c.o.topK, details);
  const now = c.now();
  const asked = Date.parse(review.expiresAt);
  const expiresAt =
    !Number.isNaN(asked) && asked > now.getTime() ? new Date(asked).toISOString() : fullTermExpiry(c, now);
  const reviewerIds = reviewers.map((r) => r.id);

  const layout = splitForm(content.formElements);
  const declared = [...content.formInputSchema.map((x) => String(x['id'])), ...layout.inputIds];
  const key = layoutKey(layout.skeleton, declared);
  // Forms of one new layout in flight together share one definition, created once.
  let def = layouts.get(key);
  if (!def) {
    def = layoutDefinition(c, forms, key, layout.skeleton, declared, reviewerIds[0] as string);
    layouts.set(key, def);
  }
  const inst = await c.o.review.createFormInstance(
    {
      formDefinitionId: (await def).id,
      recipientIds: reviewerIds,
      expire: expiresAt,
      formInput: { ...content.formInput, ...layout.inputs, [INPUT.round]: '1' },
      createdBySourceId: c.o.fusionSource.id,
    },
    c.opts,
  );
  return { ref, content, details, reviewerIds, expiresAt, now, inst };
}

function recordReviewForm(c: QueueContext, f: CreatedForm, forms: ReviewForms, lines: PerAccountLines): void {
  const { ref, content, reviewerIds, expiresAt, now, inst } = f;
  forms.groups.set(ref.accountId, { accountId: ref.accountId, definitions: [], instances: [inst] });
  recordReviewFormCreated();
  const since = inst.created ?? now.toISOString();
  c.stats.formsCreated++;
  c.stats.created.push({
    ...ref,
    candidatesTotal: content.ranked.length,
    candidatesShown: content.shown,
    reviewers: reviewerIds,
    expiresAt,
  });
  c.stats.pending.push(pendingEntry({ ...ref, since, reviewers: reviewerIds }, inst.state, now, expiresAt, inst.url));
  lines.info(
    {
      accountId: ref.accountId,
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
    details: f.details,
    expiresAt,
    round: 1,
    ...(inst.url ? { url: inst.url } : {}),
  });
}

/** The shared definition of this layout: found by the run's scan, or created once. */
async function layoutDefinition(
  c: QueueContext,
  forms: ReviewForms,
  key: string,
  skeleton: Record<string, unknown>[],
  declared: string[],
  fallbackOwnerId: string,
): Promise<FormDefinition> {
  const known = forms.layouts.get(key);
  if (known) return known;
  const def = await c.o.review.createFormDefinition(
    {
      name: layoutName(key),
      description: layoutDescription(key, c.o.fusionSource.id),
      ownerId: c.o.fusionSource.owner?.id ?? fallbackOwnerId,
      formElements: skeleton,
      formInput: declared.map((id) => ({ id, type: 'STRING', label: id, description: id })),
    },
    c.opts,
  );
  forms.layouts.set(key, def);
  c.log.info(
    { layout: key, formDefinitionId: def.id },
    `Review form layout ${key} created (shared by the forms of this shape)`,
  );
  return def;
}
