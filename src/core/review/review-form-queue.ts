/**
 * The review-form lifecycle of one aggregation run, on the platform's custom forms.
 *
 * Per run: `readDecisions()` first (reads every form of ours, applies the expiry policy, deletes
 * forms with an unreadable answer), then `submit()` for each new account that has potential
 * duplicates (one form per account id, idempotent), `completeDecision()` after a decision was
 * applied, and `summary()` / `logSummary()` at the end. See docs/review-forms.md.
 *
 * Expiry policy: a form that expires unanswered is sent again once (round 2, fresh expiry, warning
 * in log and summary); after the second expiry the account is reported as "review expired" in
 * every run (warning, summary entry) until an operator deletes the form definition, which makes
 * the next run send a fresh review. Nothing is decided automatically and nothing is dropped.
 */
import type { FusionConfig } from '../config/fusion-config';
import { FusionError } from '../errors';
import type { Logger } from '../ports/logger';
import type { CallOptions, PlatformPort } from '../ports/platform';
import type { FormInstance, ReviewPlatformPort } from '../ports/review-platform';
import type { PendingReview, ReviewCandidate, ReviewQueue } from '../ports/review-queue';
import { readGroup, scanReviewForms, type GroupReading, type ReviewFormGroup } from './decisions';
import {
  INPUT,
  buildFormContent,
  rankCandidates,
  shownCount,
  storedCandidates,
  type CandidateDetails,
} from './form-content';
import { formDescription, formName } from './form-naming';
import { recordReviewFormCreated } from './metrics';
import { ReviewNotifier, reviewMessage } from './notifications';
import { resolveReviewers, reviewerProfileName } from './reviewers';
import {
  emptyReviewSummary,
  type PendingReviewEntry,
  type ReviewDecision,
  type ReviewFormRef,
  type Reviewer,
  type ReviewerResolution,
  type ReviewSummary,
} from './types';

/** Form instances an account's review gets before it is reported as expired for good. */
const REVIEW_ROUNDS = 2;
const DAY_MS = 86_400_000;

export interface ReviewFormQueueOptions {
  review: ReviewPlatformPort;
  /** For reviewer e-mails and candidate display names. */
  platform: Pick<PlatformPort, 'getIdentity'>;
  /** The connector's own source: owns the forms, creates the instances, its owner may review. */
  fusionSource: { id: string; name: string; owner?: { id: string; name: string } };
  /** "Owner is global reviewer?" */
  ownerIsGlobalReviewer: boolean;
  /** "Manual review expiration days" (renewed forms; new forms use PendingReview.expiresAt when it lies ahead). */
  expirationDays: number;
  /** matching.reviewTopK: candidates shown in detail; all candidates stay listed. */
  topK: number;
  logger: Logger;
  signal?: AbortSignal;
  now?: () => Date;
  /** Look up the display names of the top-K identity candidates (one identity read each). Default true. */
  describeCandidates?: boolean;
}

/** The FusionConfig settings the queue reads. */
export function reviewSettings(
  config: Pick<FusionConfig, 'fusionOwnerIsGlobalReviewer' | 'fusionFormExpirationDays' | 'matching'>,
): Pick<ReviewFormQueueOptions, 'ownerIsGlobalReviewer' | 'expirationDays' | 'topK'> {
  return {
    ownerIsGlobalReviewer: config.fusionOwnerIsGlobalReviewer,
    expirationDays: config.fusionFormExpirationDays,
    topK: config.matching.reviewTopK,
  };
}

function ageDays(since: string, now: Date): number {
  const t = Date.parse(since);
  return Number.isNaN(t) ? 0 : Math.round(((now.getTime() - t) / DAY_MS) * 10) / 10;
}

function label(r: { accountName: string; sourceName: string; accountId: string }): string {
  return `${r.accountName} [${r.sourceName}] (account id ${r.accountId})`;
}

export class ReviewFormQueue implements ReviewQueue {
  private readonly opts: CallOptions;
  private readonly now: () => Date;
  private readonly notifier: ReviewNotifier;
  private readonly log: Logger;
  private readonly stats: ReviewSummary = emptyReviewSummary();
  private readonly reviewerCache = new Map<string, Promise<ReviewerResolution>>();
  private readonly inflight = new Map<string, Promise<void>>();
  private forms?: Promise<Map<string, ReviewFormGroup>>;

  constructor(private readonly o: ReviewFormQueueOptions) {
    if (!(o.expirationDays > 0))
      throw new FusionError(
        'CONFIG_INVALID',
        `Manual review expiration days must be a positive number of days, got ${o.expirationDays}`,
      );
    if (!(o.topK >= 1))
      throw new FusionError('CONFIG_INVALID', `matching.reviewTopK must be at least 1, got ${o.topK}`);
    this.opts = o.signal ? { signal: o.signal } : {};
    this.now = o.now ?? (() => new Date());
    this.log = o.logger;
    this.notifier = new ReviewNotifier(o.review, o.fusionSource.owner?.id, this.opts);
  }

  /**
   * Reads every form of this connector source and returns, per source account id, its decision.
   * Side effects (the run's policy): an expired form is sent again once, or reported as expired
   * for good; an unreadable answer is logged as an error and its form deleted (the account gets a
   * new form when submitted again); a definition left without an instance is deleted.
   * Call once at the start of a run, before `submit`.
   */
  async readDecisions(): Promise<Map<string, ReviewDecision>> {
    const groups = await scanReviewForms(this.o.review, this.o.fusionSource.id, this.opts);
    this.forms = Promise.resolve(groups);
    const now = this.now();
    const out = new Map<string, ReviewDecision>();
    for (const [accountId, g] of [...groups]) {
      const reading = readGroup(g, now);
      const d = reading.decision;
      if (!d) {
        this.log.warn(
          { accountId, definitions: g.definitions.map((x) => x.name) },
          `A review form of account id ${accountId} had no form instance (an earlier run stopped while creating it); it was deleted and the account gets a new form`,
        );
        await this.deleteGroup(g, groups);
        continue;
      }
      out.set(accountId, await this.apply(d, g, reading, groups));
    }
    return out;
  }

  private async apply(
    d: ReviewDecision,
    g: ReviewFormGroup,
    reading: GroupReading,
    groups: Map<string, ReviewFormGroup>,
  ): Promise<ReviewDecision> {
    switch (d.kind) {
      case 'new-identity':
      case 'link':
        this.stats.decided.push({
          accountId: d.accountId,
          accountName: d.accountName,
          sourceName: d.sourceName,
          kind: d.kind,
          ...(d.kind === 'link' ? { identityId: d.identityId } : {}),
        });
        this.log.info(
          {
            accountId: d.accountId,
            decision: d.kind,
            ...(d.kind === 'link' ? { identityId: d.identityId } : {}),
            formInstanceId: d.formInstanceId,
          },
          d.kind === 'link'
            ? `Review decided: ${label(d)} is the same person as ${d.identityId}`
            : `Review decided: ${label(d)} is a new identity`,
        );
        return d;
      case 'pending':
        this.stats.pending.push(this.pendingEntry(d, d.state, d.expiresAt, d.url));
        return d;
      case 'invalid':
        this.stats.invalid.push({
          accountId: d.accountId,
          accountName: d.accountName,
          sourceName: d.sourceName,
          reason: d.reason,
        });
        this.log.error(
          { accountId: d.accountId, reason: d.reason },
          `The review answer for ${label(d)} cannot be applied: ${d.reason}. The form is deleted and the account gets a new review form`,
        );
        await this.deleteGroup(g, groups);
        return d;
      case 'expired':
        return this.expire(d, g, reading);
    }
  }

  private pendingEntry(
    ref: ReviewFormRef,
    state: PendingReviewEntry['state'],
    expiresAt?: string,
    url?: string,
  ): PendingReviewEntry {
    return {
      accountId: ref.accountId,
      accountName: ref.accountName,
      sourceName: ref.sourceName,
      since: ref.since,
      ageDays: ageDays(ref.since, this.now()),
      reviewers: ref.reviewers,
      state,
      ...(expiresAt ? { expiresAt } : {}),
      ...(url ? { url } : {}),
    };
  }

  private async expire(
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
    const defName = g.definitions[0]?.name ?? '';
    if (d.rounds >= REVIEW_ROUNDS) {
      this.stats.expired.push({ ...entry, renewed: false });
      this.log.warn(
        { accountId: d.accountId, rounds: d.rounds, since: d.since, form: defName },
        `Review expired: the review of ${label(d)} expired ${d.rounds} times without an answer (first sent ${d.since}). The account stays out of the aggregation; delete the form definition "${defName}" to send a new review`,
      );
      return d;
    }
    const resolution = await this.reviewersFor(d.sourceName);
    if (resolution.reviewers.length === 0) {
      this.stats.expired.push({ ...entry, renewed: false });
      this.noReviewer(d, resolution.problems, 'The expired review form cannot be sent again');
      return d;
    }
    const latest = reading.latest as FormInstance;
    for (const late of reading.overdue) await this.o.review.setFormInstanceState(late.id, 'CANCELLED', this.opts);
    const expiresAt = new Date(this.now().getTime() + this.o.expirationDays * DAY_MS).toISOString();
    const round = d.rounds + 1;
    const inst = await this.o.review.createFormInstance(
      {
        formDefinitionId: latest.formDefinitionId || (g.definitions[0]?.id ?? ''),
        recipientIds: resolution.reviewers.map((r) => r.id),
        expire: expiresAt,
        formInput: { ...latest.formInput, [INPUT.round]: String(round) },
        createdBySourceId: this.o.fusionSource.id,
      },
      this.opts,
    );
    g.instances.push(inst);
    recordReviewFormCreated();
    const renewed: ReviewDecision = {
      ...d,
      renewed: true,
      expiresAt,
      reviewers: inst.recipientIds.length ? inst.recipientIds : resolution.reviewers.map((r) => r.id),
    };
    this.stats.expired.push({ ...entry, renewed: true, expiresAt });
    this.stats.pending.push(this.pendingEntry(renewed, inst.state, expiresAt, inst.url));
    this.log.warn(
      { accountId: d.accountId, round, expiresAt, reviewers: renewed.reviewers.length },
      `Review form expired unanswered: the review of ${label(d)} was sent again (round ${round} of ${REVIEW_ROUNDS}) to ${renewed.reviewers.length} reviewer(s); it expires ${expiresAt}`,
    );
    const ranked = (storedCandidates(latest.formInput) ?? []).map((c): ReviewCandidate => ({
      candidateId: c.id,
      candidateKind: c.kind,
      score: c.score,
      scores: c.scores,
      ...(c.probability !== undefined ? { probability: c.probability } : {}),
      ...(c.matchWeight !== undefined ? { matchWeight: c.matchWeight } : {}),
      ...(c.explanation ? { explanation: c.explanation } : {}),
    }));
    const shown = shownCount(ranked.length, this.o.topK);
    const details = await this.describe(ranked.slice(0, shown));
    await this.notify(
      d,
      resolution.reviewers,
      reviewMessage({ ...d, ranked, shown, details, expiresAt, round, ...(inst.url ? { url: inst.url } : {}) }),
    );
    return renewed;
  }

  /**
   * Sends one account to review: one form definition keyed by the account id and one instance
   * addressed to all reviewers (the first answer decides), then a notification. Does nothing when
   * the account already has a form (pending, expired, or decided and not yet completed). With no
   * reviewer at all, logs an error and records a summary entry (no form; the account keeps
   * waiting and is reported again in the next run). `review.reviewers` is not used: the queue
   * resolves the reviewers itself.
   */
  async submit(review: PendingReview): Promise<void> {
    const forms = await this.index();
    if (forms.has(review.accountId)) {
      this.log.debug({ accountId: review.accountId }, 'The account already has a review form; no new form');
      return;
    }
    const running = this.inflight.get(review.accountId);
    if (running) return running;
    const p = this.create(review, forms).finally(() => this.inflight.delete(review.accountId));
    this.inflight.set(review.accountId, p);
    return p;
  }

  private async create(review: PendingReview, forms: Map<string, ReviewFormGroup>): Promise<void> {
    const ref = { accountId: review.accountId, accountName: review.accountName, sourceName: review.sourceName };
    const name = formName(review.accountName, review.sourceName, review.accountId);
    const resolution = await this.reviewersFor(review.sourceName);
    if (resolution.reviewers.length === 0) {
      this.noReviewer(ref, resolution.problems, 'No review form was created');
      return;
    }
    const ranked = rankCandidates(review.candidates);
    const details = await this.describe(ranked.slice(0, shownCount(ranked.length, this.o.topK)));
    const content = buildFormContent(review, this.o.fusionSource.id, this.o.topK, details);
    const now = this.now();
    const asked = Date.parse(review.expiresAt);
    const expiresAt =
      !Number.isNaN(asked) && asked > now.getTime()
        ? new Date(asked).toISOString()
        : new Date(now.getTime() + this.o.expirationDays * DAY_MS).toISOString();
    const reviewerIds = resolution.reviewers.map((r) => r.id);

    const def = await this.o.review.createFormDefinition(
      {
        name,
        description: formDescription(content.description, this.o.fusionSource.id),
        ownerId: this.o.fusionSource.owner?.id ?? (reviewerIds[0] as string),
        formElements: content.formElements,
        formInput: content.formInputSchema,
      },
      this.opts,
    );
    let inst: FormInstance;
    try {
      inst = await this.o.review.createFormInstance(
        {
          formDefinitionId: def.id,
          recipientIds: reviewerIds,
          expire: expiresAt,
          formInput: { ...content.formInput, [INPUT.round]: '1' },
          createdBySourceId: this.o.fusionSource.id,
        },
        this.opts,
      );
    } catch (e) {
      // Without its instance the definition would only confuse the next run: best effort removal.
      await this.o.review.deleteFormDefinition(def.id, this.opts).catch(() => undefined);
      throw e;
    }
    forms.set(review.accountId, { accountId: review.accountId, definitions: [def], instances: [inst] });
    recordReviewFormCreated();
    const since = def.created ?? inst.created ?? now.toISOString();
    this.stats.formsCreated++;
    this.stats.created.push({
      ...ref,
      candidatesTotal: content.ranked.length,
      candidatesShown: content.shown,
      reviewers: reviewerIds,
      expiresAt,
    });
    this.stats.pending.push(
      this.pendingEntry({ ...ref, since, reviewers: reviewerIds }, inst.state, expiresAt, inst.url),
    );
    this.log.info(
      {
        accountId: review.accountId,
        candidates: content.ranked.length,
        shown: content.shown,
        reviewers: reviewerIds.length,
        expiresAt,
      },
      `Review form created for ${label(ref)}: ${content.ranked.length} candidate(s), ${reviewerIds.length} reviewer(s)`,
    );
    await this.notify(
      ref,
      resolution.reviewers,
      reviewMessage({
        ...ref,
        ranked: content.ranked,
        shown: content.shown,
        details,
        expiresAt,
        round: 1,
        ...(inst.url ? { url: inst.url } : {}),
      }),
    );
  }

  /** After the aggregation applied a decision: deletes the account's form(s) so it is never applied twice. */
  async completeDecision(accountId: string): Promise<void> {
    const forms = await this.index();
    const g = forms.get(accountId);
    if (g) await this.deleteGroup(g, forms);
  }

  /**
   * Deletes the forms of accounts that no longer exist. Call only after a run that read EVERY
   * account of every source (no "Aggregation batch size", no account filter): `seen` must hold
   * all source account ids. Returns the number of accounts whose forms were deleted.
   */
  async discardUnseen(seen: ReadonlySet<string>): Promise<number> {
    const forms = await this.index();
    let n = 0;
    for (const g of [...forms.values()]) {
      if (seen.has(g.accountId) || this.inflight.has(g.accountId)) continue;
      await this.deleteGroup(g, forms);
      n++;
      this.log.info(
        { accountId: g.accountId },
        `The review form of account id ${g.accountId} was deleted: the account no longer exists`,
      );
    }
    return n;
  }

  /** A copy of what happened to reviews in this run. */
  summary(): ReviewSummary {
    return structuredClone(this.stats);
  }

  /** One info line with the counts and the pending reviews (account, age, reviewers). */
  logSummary(maxListed = 100): void {
    const s = this.stats;
    const pending = s.pending.slice(0, maxListed).map((p) => ({
      account: `${p.accountName} [${p.sourceName}]`,
      accountId: p.accountId,
      ageDays: p.ageDays,
      reviewers: p.reviewers,
    }));
    const line = {
      formsCreated: s.formsCreated,
      pending: s.pending.length,
      decided: s.decided.length,
      expired: s.expired.length,
      noReviewer: s.noReviewer.length,
      invalid: s.invalid.length,
      notificationsSent: s.notificationsSent,
      notificationProblems: s.notificationProblems.length,
      pendingReviews: pending,
      ...(s.pending.length > maxListed ? { pendingNotListed: s.pending.length - maxListed } : {}),
    };
    const msg = `Reviews: ${s.formsCreated} created, ${s.pending.length} pending, ${s.decided.length} decided, ${s.expired.length} expired, ${s.noReviewer.length} without reviewer, ${s.invalid.length} invalid`;
    if (s.noReviewer.length || s.invalid.length) this.log.error(line, msg);
    else if (s.expired.length || s.notificationProblems.length) this.log.warn(line, msg);
    else this.log.info(line, msg);
  }

  private index(): Promise<Map<string, ReviewFormGroup>> {
    if (!this.forms) {
      this.forms = scanReviewForms(this.o.review, this.o.fusionSource.id, this.opts);
      this.forms.catch(() => {
        this.forms = undefined;
      });
    }
    return this.forms;
  }

  private async deleteGroup(g: ReviewFormGroup, groups: Map<string, ReviewFormGroup>): Promise<void> {
    for (const def of g.definitions) await this.o.review.deleteFormDefinition(def.id, this.opts);
    groups.delete(g.accountId);
  }

  private reviewersFor(sourceName: string): Promise<ReviewerResolution> {
    let r = this.reviewerCache.get(sourceName);
    if (!r) {
      r = resolveReviewers(
        { review: this.o.review, platform: this.o.platform },
        {
          sourceName,
          ownerIsGlobalReviewer: this.o.ownerIsGlobalReviewer,
          ...(this.o.fusionSource.owner ? { owner: this.o.fusionSource.owner } : {}),
        },
        this.opts,
      );
      this.reviewerCache.set(sourceName, r);
      r.catch(() => this.reviewerCache.delete(sourceName));
    }
    return r;
  }

  private noReviewer(
    ref: { accountId: string; accountName: string; sourceName: string },
    problems: string[],
    what: string,
  ): void {
    const reason = problems.join('; ') || 'no reviewer was found';
    this.stats.noReviewer.push({ ...ref, reason });
    this.log.error(
      { accountId: ref.accountId, source: ref.sourceName, reason },
      `No reviewer for the potential duplicate ${label(ref)}: ${reason}. ${what}; the account is not aggregated until it can be reviewed. Assign the access profile "${reviewerProfileName(ref.sourceName)}" to a reviewer or switch on "Owner is global reviewer?"`,
    );
  }

  private async describe(top: readonly ReviewCandidate[]): Promise<Map<string, CandidateDetails>> {
    const out = new Map<string, CandidateDetails>();
    if (this.o.describeCandidates === false) return out;
    const identities = top.filter((c) => c.candidateKind === 'identity');
    const found = await Promise.all(identities.map((c) => this.o.platform.getIdentity(c.candidateId, this.opts)));
    found.forEach((identity) => {
      if (identity) out.set(identity.id, { name: identity.name, attributes: identity.attributes });
    });
    return out;
  }

  private async notify(
    ref: { accountId: string; accountName: string; sourceName: string },
    reviewers: Reviewer[],
    message: { subject: string; body: string },
  ): Promise<void> {
    const outcome = await this.notifier.notify(reviewers, message);
    if (outcome.sent) {
      this.stats.notificationsSent++;
      if (outcome.missingEmail.length)
        this.log.warn(
          { accountId: ref.accountId, reviewers: outcome.missingEmail },
          `Reviewers without an e-mail address were not notified: ${outcome.missingEmail.join(', ')}`,
        );
      return;
    }
    this.stats.notificationProblems.push({ ...ref, reason: outcome.reason });
    this.log.warn(
      { accountId: ref.accountId, reason: outcome.reason },
      `The reviewers of ${label(ref)} were not notified: ${outcome.reason}. The form is still in their task list`,
    );
  }
}
