import type { Logger } from '../ports/logger';
import type { ReviewDecisionView, ReviewQueue } from '../ports/review-queue';
import type { ConnectorAccountIndex } from './connector-account-index';
import type { RunScope } from './run-scope';

/**
 * The review decisions of one run (when the review queue has a lifecycle): read at the start,
 * applied as the accounts they name are read, completed (forms deleted) once everything is
 * emitted. "Same person as" joins the source account to that person's connector account; "not a
 * duplicate" lets it through unmatched; an open form keeps the account out of this run.
 */
export class ReviewDecisions {
  private decisions = new Map<string, ReviewDecisionView>();
  /** Source accounts a decision "not a duplicate" lets through without matching. */
  private readonly approvedNew = new Set<string>();
  /** Approved links to an identity that has no connector account: source account id -> identity id. */
  private readonly linkedIdentity = new Map<string, string>();
  /** Source accounts an approved link joins to an existing connector account in this run. */
  private readonly pendingLinks = new Set<string>();
  /** Decisions applied by this run (their account was read and emitted). */
  private readonly applied: string[] = [];
  /** Accounts of this run that have (or now get) a review form: the forms to keep. */
  private readonly seen = new Set<string>();

  constructor(
    private readonly reviews: ReviewQueue,
    private readonly logger: Logger,
  ) {}

  async load(index: ConnectorAccountIndex): Promise<void> {
    if (!this.reviews.readDecisions) return;
    this.decisions = await this.reviews.readDecisions();
    for (const [accountId, d] of this.decisions) {
      if (d.kind === 'new-identity') this.approvedNew.add(accountId);
      if (d.kind !== 'link') continue;
      const target = index.target(d.identityId, d.candidateKind);
      if (!target && d.candidateKind === 'identity') {
        // The person is an identity without a connector account (e.g. from an authoritative HR
        // source): the account becomes a connector account correlated with that identity.
        this.approvedNew.add(accountId);
        this.linkedIdentity.set(accountId, d.identityId);
        continue;
      }
      if (!target) {
        this.logger.warn(
          { accountId, identityId: d.identityId },
          `The review decision for account id ${accountId} names ${d.identityId}, which has no connector account yet; the account keeps waiting`,
        );
        continue;
      }
      // Counted as a contributor now so the connector account waits for it in the main loop.
      index.link(accountId, target);
      this.pendingLinks.add(accountId);
    }
  }

  /** Every source account read, before any filter: its form (if any) stays. */
  noteRead(accountId: string): void {
    if (this.decisions.has(accountId)) this.seen.add(accountId);
  }

  /** A new account whose review is still open (pending or expired form, unresolved link) waits. */
  waitsForReview(accountId: string): boolean {
    const d = this.decisions.get(accountId);
    if (!d || d.kind === 'new-identity' || d.kind === 'invalid' || this.approvedNew.has(accountId)) return false;
    this.seen.add(accountId);
    return true;
  }

  /** "Not a duplicate" (or a link to an identity without connector account): not matched again. */
  skipsMatching(accountId: string): boolean {
    return this.approvedNew.has(accountId);
  }

  /** The identity an approved link correlates a new connector account with. */
  linkedIdentityOf(accountId: string): string | undefined {
    return this.linkedIdentity.get(accountId);
  }

  /** A review form was opened for the account in this run. */
  noteSubmitted(accountId: string): void {
    this.seen.add(accountId);
  }

  /** A new connector account was emitted for the account. */
  noteCreated(accountId: string): void {
    if (this.approvedNew.has(accountId)) this.applied.push(accountId);
  }

  /**
   * Contributors of a refreshed connector account: a linked source account this run did not read
   * joins on the run that reads it (its form waits); those read are applied now.
   */
  contributorsAfterRefresh(contributors: readonly string[], seenIds: ReadonlySet<string>): string[] {
    for (const id of seenIds) if (this.pendingLinks.has(id)) this.applied.push(id);
    return [...new Set([...contributors.filter((id) => !this.pendingLinks.has(id) || seenIds.has(id)), ...seenIds])];
  }

  /** Completes the applied decisions and, after a full run, discards forms of accounts not read. */
  async close(scope: RunScope): Promise<unknown> {
    const r = this.reviews;
    // Forms first: a decision completed below never races a form of this run.
    await r.send?.();
    await r.completeDecisions?.(this.applied);
    // Forms of accounts that were not read (including disabled sources) no longer have an account.
    if (scope.mayDiscardForms && r.discardUnseen) await r.discardUnseen(this.seen);
    r.logSummary?.();
    return r.summary?.();
  }
}
