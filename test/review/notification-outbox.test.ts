/**
 * #28 item 2: a notification that could not be sent (the worker was killed between the form and its
 * message, or the notification workflow failed) is sent by a later run, exactly once, and no form is
 * created twice. The outbox lives on the connector's own source in the simulator.
 */
import { OUTBOX_KEY } from '../../src/core/review/notification-outbox';
import type { ReviewPlatformPort } from '../../src/core/ports/review-platform';
import { type Harness, candidates, pendingReview, submitAndSend, useReviewSimulator } from './support';

describe('the notification outbox', () => {
  let h: Harness;
  useReviewSimulator((x) => (h = x));

  const fusionSourceId = (): string => h.sim.tenant.meta.fusionSourceId as string;
  const run = (review?: ReviewPlatformPort): ReturnType<Harness['queue']> =>
    h.queue(fusionSourceId(), { platform: h.client, ...(review ? { review } : {}) });
  const outbox = (): unknown => h.sim.tenant.sources.get(fusionSourceId())?.connectorAttributes[OUTBOX_KEY];
  const messagesAbout = (accountId: string): number =>
    h.sim.control
      .workflowRuns()
      .filter((r) => String((r.input as { body?: string }).body).includes(`(id ${accountId})`)).length;

  it('a run killed after creating the form and before notifying: the next run notifies once, the one after not again', async () => {
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 2)) });
    // The worker "dies" when it reaches the notification: the workflow call never returns.
    let reached = (): void => undefined;
    const atNotification = new Promise<void>((r) => (reached = r));
    const dying: ReviewPlatformPort = Object.assign(Object.create(h.review) as ReviewPlatformPort, {
      runWorkflow: () => {
        reached();
        return new Promise<never>(() => undefined);
      },
    });
    const first = run(dying).queue;
    void submitAndSend(first, review);
    await atNotification;
    expect(h.instancesOf(review.accountId)).toHaveLength(1);
    expect(messagesAbout(review.accountId)).toBe(0);
    expect(JSON.stringify(outbox())).toContain(review.accountId);

    // The next run: the account already has its form (no new one), and the owed message goes out.
    const second = run();
    await second.queue.readDecisions();
    await submitAndSend(second.queue, review);
    expect(h.instancesOf(review.accountId)).toHaveLength(1);
    expect(
      new Set(
        [...h.sim.tenant.formInstances.values()]
          .filter((i) => (i['formInput'] as Record<string, unknown>)['accountId'] === review.accountId)
          .map((i) => i['id']),
      ).size,
    ).toBe(1);
    const holders = h.holders('LDAP');
    const emails = new Set(holders.map((id) => String(h.sim.tenant.identities.get(id)?.attributes['email'])));
    const runs = h.sim.control
      .workflowRuns()
      .map((r) => r.input as { body: string; recipients: string[] })
      .filter((r) => r.body.includes(`(id ${review.accountId})`));
    expect(runs).toHaveLength(1);
    expect(new Set(runs[0]!.recipients)).toEqual(emails);
    expect(runs[0]!.body).toContain(String(h.onlyInstance(review.accountId)['standAloneFormUrl']));
    expect(second.queue.summary().notificationsSent).toBe(1);
    expect(JSON.stringify(outbox() ?? {})).not.toContain(review.accountId);

    // And never again.
    const third = run();
    await third.queue.readDecisions();
    await submitAndSend(third.queue, review);
    expect(messagesAbout(review.accountId)).toBe(1);
  });

  it('a notification workflow that failed is sent by the next run, once', async () => {
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 1)) });
    h.sim.control.injectFault({ method: 'POST', pathTemplate: '/v3/workflows/{id}/test', status: 400 });
    const first = run();
    try {
      await submitAndSend(first.queue, review);
    } finally {
      h.sim.control.clearFaults();
    }
    expect(first.queue.summary().notificationProblems).toHaveLength(1);
    expect(first.log.at('warn').some((l) => l.msg.includes('the next run sends the notification again'))).toBe(true);
    expect(messagesAbout(review.accountId)).toBe(0);

    for (let i = 0; i < 2; i++) {
      const next = run();
      await next.queue.readDecisions();
      await next.queue.send();
    }
    expect(messagesAbout(review.accountId)).toBe(1);
  });

  it('a form decided before the owed message went out is dropped from the outbox, not announced', async () => {
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 1)) });
    h.sim.control.injectFault({ method: 'POST', pathTemplate: '/v3/workflows/{id}/test', status: 400 });
    try {
      await submitAndSend(run().queue, review);
    } finally {
      h.sim.control.clearFaults();
    }
    h.sim.control.completeFormInstance(String(h.onlyInstance(review.accountId)['id']), { newIdentity: true });
    const next = run();
    await next.queue.readDecisions();
    await next.queue.send();
    expect(messagesAbout(review.accountId)).toBe(0);
    expect(JSON.stringify(outbox() ?? {})).not.toContain(review.accountId);
  });

  it('reads a malformed outbox as empty, keeping what it can', async () => {
    const { parseOutbox } = await import('../../src/core/review/notification-outbox');
    expect(parseOutbox('x').size).toBe(0);
    expect(parseOutbox([1]).size).toBe(0);
    expect([...parseOutbox({ r1: ['a', 3, ''], r2: 'b', r3: [] })]).toEqual([['r1', new Set(['a'])]]);
  });
});
