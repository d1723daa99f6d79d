/**
 * The run's notifications: one message per reviewer per run, listing every form that reviewer was
 * not yet told about (this run's new and renewed forms, and forms an earlier run could not announce).
 * Reviewers with the same list share one workflow run. What is owed is kept in the outbox
 * (notification-outbox.ts) until it was sent, so it is sent by a later run when this one cannot.
 */
import type { Logger } from '../ports/logger';
import type { FormInstance } from '../ports/review-platform';
import type { ReviewCandidate } from '../ports/review-queue';
import { storedCandidates, type CandidateDetails } from './form-content';
import { INPUT } from './form-content';
import { addToOutbox, type Outbox, type OutboxStore } from './notification-outbox';
import { reviewDigest, type NoticeEntry, type ReviewNotifier } from './notifications';
import type { Reviewer, ReviewerResolution, ReviewSummary } from './types';

/** The ranked candidates and their display data as an instance stored them. */
function storedRanking(formInput: Record<string, unknown>): {
  ranked: ReviewCandidate[];
  details: Map<string, CandidateDetails>;
} {
  const details = new Map<string, CandidateDetails>();
  const ranked = (storedCandidates(formInput) ?? []).map((c): ReviewCandidate => {
    if (c.name) details.set(c.id, { name: c.name });
    return {
      candidateId: c.id,
      candidateKind: c.kind,
      score: c.score,
      scores: c.scores,
      ...(c.probability !== undefined ? { probability: c.probability } : {}),
      ...(c.matchWeight !== undefined ? { matchWeight: c.matchWeight } : {}),
      ...(c.explanation ? { explanation: c.explanation } : {}),
    };
  });
  return { ranked, details };
}

/** A notice for an existing instance (a renewal, or a form an earlier run could not announce). */
export function noticeOf(
  ref: { accountId: string; accountName: string; sourceName: string },
  inst: FormInstance,
): NoticeEntry {
  const round = Number(inst.formInput[INPUT.round]);
  return {
    ...ref,
    ...storedRanking(inst.formInput),
    round: Number.isInteger(round) && round > 0 ? round : 1,
    ...(inst.url ? { url: inst.url } : {}),
    ...(inst.expire ? { expiresAt: inst.expire } : {}),
  };
}

export interface NoticeDeps {
  notifier: ReviewNotifier;
  store?: OutboxStore;
  log: Logger;
  stats: ReviewSummary;
  reviewersFor(sourceName: string): Promise<ReviewerResolution>;
}

export class ReviewNotices {
  private outbox?: Promise<Outbox>;
  private readonly entries = new Map<string, NoticeEntry>();

  constructor(private readonly d: NoticeDeps) {}

  /** What earlier runs still owe (read once per run). */
  owed(): Promise<Outbox> {
    if (!this.outbox) {
      this.outbox = this.d.store ? this.d.store.read() : Promise.resolve(new Map());
      this.outbox.catch(() => (this.outbox = undefined));
    }
    return this.outbox;
  }

  /** Records that `reviewerIds` must be told about the account's form; `save()` before creating the form. */
  async owe(reviewerIds: readonly string[], accountId: string): Promise<void> {
    addToOutbox(await this.owed(), reviewerIds, accountId);
  }

  async save(): Promise<void> {
    await this.d.store?.write(await this.owed());
  }

  /** The form of `accountId` to list in this run's messages. */
  add(entry: NoticeEntry): void {
    this.entries.set(entry.accountId, entry);
  }

  has(accountId: string): boolean {
    return this.entries.has(accountId);
  }

  /**
   * Sends what is owed: one message per group of reviewers owed the same forms. An account whose form
   * is no longer waiting (`describe` returns nothing: decided, deleted) is dropped from the outbox.
   */
  async sendAll(describe: (accountId: string) => NoticeEntry | undefined): Promise<void> {
    const outbox = await this.owed();
    let dirty = false;
    const groups = new Map<string, { reviewerIds: string[]; entries: NoticeEntry[] }>();
    for (const [reviewerId, ids] of outbox) {
      const entries: NoticeEntry[] = [];
      for (const id of [...ids]) {
        const e = this.entries.get(id) ?? describe(id);
        if (e) entries.push(e);
        else {
          ids.delete(id);
          dirty = true;
        }
      }
      if (entries.length === 0) {
        outbox.delete(reviewerId);
        continue;
      }
      entries.sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
      const key = entries.map((e) => e.accountId).join(' ');
      const g = groups.get(key);
      if (g) g.reviewerIds.push(reviewerId);
      else groups.set(key, { reviewerIds: [reviewerId], entries });
    }
    if (dirty) await this.save();
    for (const g of groups.values()) await this.sendGroup(outbox, g.reviewerIds, g.entries);
  }

  private async sendGroup(outbox: Outbox, reviewerIds: string[], entries: NoticeEntry[]): Promise<void> {
    const { log, stats } = this.d;
    const reviewers: Reviewer[] = [];
    const unknown: string[] = [];
    for (const id of reviewerIds) {
      const r = await this.reviewer(id, entries);
      if (r) reviewers.push(r);
      else unknown.push(id);
    }
    if (unknown.length)
      log.warn(
        { reviewers: unknown },
        `Identities no longer reviewers of these forms were not notified: ${unknown.join(', ')}`,
      );
    const outcome = reviewers.length
      ? await this.d.notifier.notify(reviewers, reviewDigest(entries))
      : { sent: false as const, reason: 'no reviewer left', missingEmail: [] };
    if (!outcome.sent) {
      for (const e of entries)
        stats.notificationProblems.push({
          accountId: e.accountId,
          accountName: e.accountName,
          sourceName: e.sourceName,
          reason: outcome.reason,
        });
      // A workflow that failed is tried again by the next run (kept in the outbox); a reviewer
      // without an e-mail address never can be.
      const retry = reviewers.some((r) => r.email);
      log.warn(
        { forms: entries.length, reviewers: reviewerIds, reason: outcome.reason },
        `${reviewerIds.length} reviewer(s) were not notified of ${entries.length} review form(s): ${outcome.reason}. The forms are in their task list${retry ? '; the next run sends the notification again' : ''}`,
      );
      if (retry) return;
    } else stats.notificationsSent++;
    const missing = reviewers.filter((r) => !r.email).map((r) => `${r.name} (${r.id})`);
    if (missing.length)
      log.warn(
        { reviewers: missing, forms: entries.length },
        `Reviewers without an e-mail address were not notified: ${missing.join(', ')}`,
      );
    // Sent, or never sendable (no e-mail address, no longer a reviewer): nothing more is owed.
    for (const id of reviewerIds) outbox.delete(id);
    await this.save();
  }

  private async reviewer(id: string, entries: readonly NoticeEntry[]): Promise<Reviewer | undefined> {
    for (const source of new Set(entries.map((e) => e.sourceName))) {
      const found = (await this.d.reviewersFor(source)).reviewers.find((r) => r.id === id);
      if (found) return found;
    }
    return undefined;
  }
}
