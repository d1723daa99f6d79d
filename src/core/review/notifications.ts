/**
 * Reviewer notifications through the platform: a workflow "Fusion review notification" (external
 * trigger, one send-email step fed by the trigger's subject, body and recipients) is created once
 * when missing and run with {subject, body, recipients} per new or renewed form. A failure to
 * notify never loses the form (it stays listed as pending); it is returned for a warning.
 */
import { errorMessage } from '../errors';
import type { CallOptions } from '../ports/platform';
import type { ReviewPlatformPort, WorkflowRef } from '../ports/review-platform';
import type { Reviewer } from './types';
import type { ReviewCandidate } from '../ports/review-queue';
import { candidateLines, showingText, type CandidateDetails } from './form-content';

export const NOTIFICATION_WORKFLOW = 'Fusion review notification';

function notificationWorkflowDefinition(): Record<string, unknown> {
  return {
    start: 'Send Email',
    steps: {
      'Send Email': {
        actionId: 'sp:send-email',
        versionNumber: 2,
        type: 'action',
        displayName: 'Send review e-mail',
        attributes: {
          'recipientEmailList.$': '$.trigger.recipients',
          'subject.$': '$.trigger.subject',
          'body.$': '$.trigger.body',
          context: {},
        },
        nextStep: 'End',
      },
      End: { type: 'success', displayName: 'End' },
    },
  };
}

export interface ReviewMessage {
  subject: string;
  body: string;
}

export type NotifyOutcome =
  { sent: true; recipients: number; missingEmail: string[] } | { sent: false; reason: string };

export class ReviewNotifier {
  private workflow?: Promise<WorkflowRef>;

  constructor(
    private readonly review: Pick<ReviewPlatformPort, 'listWorkflows' | 'createWorkflow' | 'runWorkflow'>,
    private readonly ownerId: string | undefined,
    private readonly opts: CallOptions,
  ) {}

  /** The workflow, looked up (exact name) or created once per notifier. */
  ensureWorkflow(fallbackOwnerId?: string): Promise<WorkflowRef> {
    if (!this.workflow) {
      this.workflow = this.findOrCreate(fallbackOwnerId);
      // A failed lookup is retried by the next form instead of failing every later notification.
      this.workflow.catch(() => {
        this.workflow = undefined;
      });
    }
    return this.workflow;
  }

  private async findOrCreate(fallbackOwnerId?: string): Promise<WorkflowRef> {
    for await (const w of this.review.listWorkflows(this.opts)) if (w.name === NOTIFICATION_WORKFLOW) return w;
    const ownerId = this.ownerId ?? fallbackOwnerId;
    if (!ownerId) throw new Error("no owner for the notification workflow (the connector's source has no owner)");
    return this.review.createWorkflow(
      {
        name: NOTIFICATION_WORKFLOW,
        description:
          'Sends Identity Fusion review requests to reviewers (run by the connector with subject, body and recipients)',
        ownerId,
        definition: notificationWorkflowDefinition(),
        trigger: { type: 'EXTERNAL', attributes: {} },
        enabled: false,
      },
      this.opts,
    );
  }

  async notify(reviewers: readonly Reviewer[], message: ReviewMessage): Promise<NotifyOutcome> {
    const recipients = [...new Set(reviewers.flatMap((r) => (r.email ? [r.email] : [])))];
    const missingEmail = reviewers.filter((r) => !r.email).map((r) => `${r.name} (${r.id})`);
    if (recipients.length === 0)
      return { sent: false, reason: `no reviewer has an e-mail address (${missingEmail.join(', ')})` };
    try {
      const wf = await this.ensureWorkflow(reviewers[0]?.id);
      await this.review.runWorkflow(wf.id, { subject: message.subject, body: message.body, recipients }, this.opts);
      return { sent: true, recipients: recipients.length, missingEmail };
    } catch (e) {
      if (this.opts.signal?.aborted) throw e;
      return { sent: false, reason: `the notification workflow failed: ${errorMessage(e)}` };
    }
  }
}

/** Candidates listed per form in a message (the form itself details reviewTopK and lists all). */
const CANDIDATES_PER_FORM_IN_MESSAGE = 3;

/** One form a message points a reviewer to. */
export interface NoticeEntry {
  accountId: string;
  accountName: string;
  sourceName: string;
  ranked: readonly ReviewCandidate[];
  details: ReadonlyMap<string, CandidateDetails>;
  url?: string;
  expiresAt?: string;
  /** 2 for a form sent again after it expired unanswered. */
  round: number;
}

function entryLines(e: NoticeEntry, n: number): string[] {
  const again = e.round > 1 ? ' - sent again: the first form expired unanswered' : '';
  const shown = Math.min(e.ranked.length, CANDIDATES_PER_FORM_IN_MESSAGE);
  return [
    `${n}. Account: ${e.accountName} [${e.sourceName}] (id ${e.accountId})${again}`,
    `   ${shown < e.ranked.length ? `Best ${shown} of ${e.ranked.length} candidates` : showingText(shown, e.ranked.length)}:`,
    ...candidateLines(e.ranked.slice(0, shown), e.details).map((l) => `     ${l}`),
    `   ${e.url ? `Open the review form: ${e.url}` : 'Open the review form from your task list.'}`,
    ...(e.expiresAt
      ? [
          `   The form expires on ${e.expiresAt}.${e.round > 1 ? ' This is the last round: if it expires again, the account stays out of the identity list until an administrator acts.' : ''}`,
        ]
      : []),
  ];
}

/** One message for one reviewer (or reviewers with the same forms): how many forms, and each with its link. */
export function reviewDigest(entries: readonly NoticeEntry[]): ReviewMessage {
  const n = entries.length;
  const first = entries[0];
  const subject =
    n === 1 && first
      ? `Identity Fusion review required: ${first.accountName} [${first.sourceName}]`
      : `Identity Fusion review required: ${n} review forms`;
  const lines = [
    n === 1
      ? 'A new account may belong to a person who already has an identity: 1 review form is waiting for you.'
      : `New accounts may belong to people who already have an identity: ${n} review forms are waiting for you.`,
    '',
    ...entries.flatMap((e, i) => [...entryLines(e, i + 1), '']),
    'The first answer from any reviewer decides; the account stays out of the identity list until then.',
  ];
  return { subject, body: lines.join('\n') };
}
