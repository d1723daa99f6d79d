/**
 * The review-form lifecycle of one aggregation run, on the platform's custom forms.
 *
 * Per run: `readDecisions()` first (reads every form of ours, applies the expiry policy, deletes
 * forms with an unreadable answer), then `submit()` for each new account that has potential
 * duplicates (queued: one form per account id, idempotent), `send()` once matching is over (creates
 * the forms, then one notification per reviewer, owed ones of earlier runs included),
 * `completeDecisions()` with the decisions the run applied, and `summary()` / `logSummary()` at the end.
 * See docs/review-forms.md.
 *
 * Expiry policy: a form that expires unanswered is sent again once (round 2, fresh expiry, warning
 * in log and summary); after the second expiry the account is reported as "review expired" in
 * every run (warning, summary entry) until an operator deletes the form definition, which makes
 * the next run send a fresh review. Nothing is decided automatically and nothing is dropped.
 */
import { callsInFlight } from '../config/api-use-settings';
import type { FusionConfig } from '../config/fusion-config';
import { FusionError } from '../errors';
import { PerAccountLines } from '../logging/per-account-lines';
import type { Logger } from '../ports/logger';
import type { CallOptions } from '../ports/platform';
import type { PendingReview, ReviewQueue } from '../ports/review-queue';
import {
  OPEN_STATES,
  readGroup,
  scanReviewForms,
  supersededBy,
  createdAt,
  type GroupReading,
  type ReviewFormGroup,
  type ReviewForms,
} from './decisions';
import { sourceOutbox } from './notification-outbox';
import { ReviewNotifier } from './notifications';
import { createReviewForms, type PlannedForm } from './form-creation';
import { inFlightInOrder } from './in-flight';
import { planRenewal, renewAll, type Renewal } from './form-renewal';
import { formsInFlight, type QueueContext, type ReviewFormQueueOptions } from './queue-context';
import { label, logReviewSummary, pendingEntry, reportNoReviewer } from './review-log';
import { ReviewNotices, noticeOf } from './review-notices';
import { resolveReviewers } from './reviewers';
import { emptyReviewSummary, type ReviewDecision, type ReviewerResolution, type ReviewSummary } from './types';

/** The FusionConfig settings the queue reads. */
export function reviewSettings(
  config: Pick<
    FusionConfig,
    'fusionOwnerIsGlobalReviewer' | 'fusionFormExpirationDays' | 'matching' | 'enableQueue' | 'maxConcurrentRequests'
  >,
): Pick<ReviewFormQueueOptions, 'ownerIsGlobalReviewer' | 'expirationDays' | 'topK' | 'formsInFlight'> {
  return {
    ownerIsGlobalReviewer: config.fusionOwnerIsGlobalReviewer,
    expirationDays: config.fusionFormExpirationDays,
    topK: config.matching.reviewTopK,
    formsInFlight: callsInFlight(config),
  };
}

export type { ReviewFormQueueOptions };

export class ReviewFormQueue implements ReviewQueue {
  private readonly opts: CallOptions;
  private readonly now: () => Date;
  private readonly log: Logger;
  private readonly stats: ReviewSummary = emptyReviewSummary();
  private readonly reviewerCache = new Map<string, Promise<ReviewerResolution>>();
  private readonly notices: ReviewNotices;
  /** Reviews submitted in this run, created by send(). */
  private readonly queued = new Map<string, PendingReview>();
  private forms?: Promise<ReviewForms>;

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
    const { getSource, patchSourceConnectorAttributes } = o.platform;
    this.notices = new ReviewNotices({
      notifier: new ReviewNotifier(o.review, o.fusionSource.owner?.id, this.opts),
      ...(getSource && patchSourceConnectorAttributes
        ? {
            store: sourceOutbox(
              {
                getSource: getSource.bind(o.platform),
                patchSourceConnectorAttributes: patchSourceConnectorAttributes.bind(o.platform),
              },
              o.fusionSource.id,
              this.opts,
            ),
          }
        : {}),
      log: this.log,
      stats: this.stats,
      reviewersFor: (source) => this.reviewersFor(source),
    });
  }

  /**
   * Reads every form of this connector source and returns, per source account id, its decision.
   * Side effects (the run's policy): an expired form is sent again once, or reported as expired
   * for good; an unreadable answer is logged as an error and its form deleted (the account gets a
   * new form when submitted again); a definition left without an instance is deleted.
   * Call once at the start of a run, before `submit`.
   */
  async readDecisions(): Promise<Map<string, ReviewDecision>> {
    const forms = await scanReviewForms(this.o.review, this.o.fusionSource.id, this.opts);
    this.forms = Promise.resolve(forms);
    const groups = forms.groups;
    const now = this.now();
    const out = new Map<string, ReviewDecision>();
    const renewals: Renewal[] = [];
    for (const [accountId, g] of [...groups]) {
      const reading = readGroup(g, now);
      const d = reading.decision;
      if (!d) {
        this.log.warn(
          { accountId, definitions: g.definitions.map((x) => x.name) },
          `A review form of account id ${accountId} had no form instance (an earlier run stopped while creating it); it was deleted and the account gets a new form`,
        );
        await this.deleteGroup(g, groups, 'no instance');
        continue;
      }
      const applied = await this.apply(d, g, reading, groups);
      if ('renew' in applied) renewals.push(applied);
      // A renewed form's decision replaces this one in place (same position in the map).
      out.set(accountId, 'renew' in applied ? applied.d : applied);
    }
    await renewAll(this.context(), renewals, (accountId, renewed) => out.set(accountId, renewed));
    return out;
  }

  private async apply(
    d: ReviewDecision,
    g: ReviewFormGroup,
    reading: GroupReading,
    groups: Map<string, ReviewFormGroup>,
  ): Promise<ReviewDecision | Renewal> {
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
        this.stats.pending.push(pendingEntry(d, d.state, this.now(), d.expiresAt, d.url));
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
        await this.deleteGroup(g, groups, `answer invalid: ${d.reason}`);
        return d;
      case 'expired':
        return planRenewal(this.context(), d, g, reading);
    }
  }

  /**
   * Queues one account's review; `send()` creates its form. Does nothing when the account already
   * has a form (pending, expired, or decided and not yet completed) or is queued. `review.reviewers`
   * is not used: the queue resolves the reviewers itself.
   */
  async submit(review: PendingReview): Promise<void> {
    const { groups } = await this.index();
    if (groups.has(review.accountId) || this.queued.has(review.accountId)) {
      this.log.debug({ accountId: review.accountId }, 'The account already has a review form; no new form');
      return;
    }
    this.queued.set(review.accountId, review);
  }

  /**
   * Creates the forms of the reviews queued in this run (one definition and one instance addressed
   * to all reviewers, the first answer decides) and sends one message per reviewer, listing them and
   * the forms earlier runs could not announce. Accounts with no reviewer at all get no form: an
   * error line and a summary entry (the account keeps waiting and is reported again next run).
   * Before any form is created, what is owed is saved in the outbox.
   */
  async send(): Promise<void> {
    const forms = await this.index();
    const planned: PlannedForm[] = [];
    for (const review of this.queued.values()) {
      const resolution = await this.reviewersFor(review.sourceName);
      if (resolution.reviewers.length === 0)
        reportNoReviewer(this.stats, this.log, review, resolution.problems, 'No review form was created');
      else planned.push({ review, reviewers: resolution.reviewers });
    }
    this.queued.clear();
    for (const p of planned)
      await this.notices.owe(
        p.reviewers.map((r) => r.id),
        p.review.accountId,
      );
    if (planned.length) await this.notices.save();
    await createReviewForms(this.context(), planned, forms);
    const now = this.now();
    await this.notices.sendAll((accountId) => {
      const g = forms.groups.get(accountId);
      const reading = g && readGroup(g, now);
      return reading?.decision?.kind === 'pending' && reading.latest
        ? noticeOf(reading.decision, reading.latest)
        : undefined;
    });
  }

  /**
   * After the aggregation applied decisions: deletes those accounts' forms so that none is applied twice,
   * several at once (in-flight.ts; a run after reviewers answered thousands of forms closes thousands).
   */
  async completeDecisions(accountIds: readonly string[]): Promise<void> {
    const { groups } = await this.index();
    const done = [...new Set(accountIds)].flatMap((id) => groups.get(id) ?? []);
    await this.deleteGroups(done, groups, 'decision applied', () => undefined);
  }

  /**
   * Deletes the forms of accounts that no longer exist. Call only after a run that read EVERY
   * account of every source (no "Aggregation batch size", no account filter): `seen` must hold
   * all source account ids. Returns the number of accounts whose forms were deleted.
   */
  async discardUnseen(seen: ReadonlySet<string>): Promise<number> {
    const { groups } = await this.index();
    const gone = [...groups.values()].filter((g) => !seen.has(g.accountId) && !this.queued.has(g.accountId));
    const lines = new PerAccountLines(this.log, 'review forms deleted because their account no longer exists');
    let n = 0;
    await this.deleteGroups(gone, groups, 'account no longer exists', (g) => {
      n++;
      lines.info(
        { accountId: g.accountId },
        `The review form of account id ${g.accountId} was deleted: the account no longer exists`,
      );
    });
    return n;
  }

  /** A copy of what happened to reviews in this run. */
  summary(): ReviewSummary {
    return structuredClone(this.stats);
  }

  /** One info line with the counts and the pending reviews (account, age, reviewers). */
  logSummary(maxListed = 100): void {
    logReviewSummary(this.stats, this.log, maxListed);
  }

  private context(): QueueContext {
    return {
      o: this.o,
      opts: this.opts,
      now: this.now,
      log: this.log,
      stats: this.stats,
      notices: this.notices,
      reviewersFor: (source) => this.reviewersFor(source),
    };
  }

  private index(): Promise<ReviewForms> {
    if (!this.forms) {
      this.forms = scanReviewForms(this.o.review, this.o.fusionSource.id, this.opts);
      this.forms.catch(() => {
        this.forms = undefined;
      });
    }
    return this.forms;
  }

  /**
   * Removes an account's form: a definition of its own is deleted (its instances with it); an
   * instance of a shared layout is closed (marked, and cancelled while still open).
   */
  private async deleteGroup(g: ReviewFormGroup, groups: Map<string, ReviewFormGroup>, reason: string): Promise<void> {
    for (const def of g.definitions) await this.o.review.deleteFormDefinition(def.id, this.opts);
    const own = new Set(g.definitions.map((d) => d.id));
    // Newest first: once it is closed, the rounds before it that nobody can answer are ended with it.
    const shared = g.instances.filter((i) => !own.has(i.formDefinitionId)).reverse();
    const newest = shared[0];
    const newestCreated = createdAt(newest);
    for (const inst of shared)
      if (inst === newest || !supersededBy(inst, newestCreated))
        await this.o.review.closeFormInstance(inst.id, reason, OPEN_STATES.has(inst.state), this.opts);
    groups.delete(g.accountId);
  }

  /** deleteGroup for each of `list`, formsInFlight at a time; `deleted` is told of each, in order. */
  private deleteGroups(
    list: readonly ReviewFormGroup[],
    groups: Map<string, ReviewFormGroup>,
    reason: string,
    deleted: (g: ReviewFormGroup) => void,
  ): Promise<void> {
    return inFlightInOrder(
      list,
      formsInFlight(this.o),
      (g) => this.deleteGroup(g, groups, reason),
      (_, g) => deleted(g),
    );
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
}
