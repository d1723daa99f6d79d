/**
 * A review sent again has two instances, round 1's (cancelled when it expired) and round 2's. Closing the
 * newest ends the rounds before it: one platform call per answered review, and no later run reads the
 * old round as a review of its own.
 */
import { type Harness, candidates, pendingReview, submitAndSend, uid, useReviewSimulator } from './support';

describe('review rounds', () => {
  let h: Harness;
  useReviewSimulator((x) => (h = x));

  const closes = (): number => h.sim.control.counters().byTemplate['PATCH /beta/form-instances/{id}'] ?? 0;
  const onlyOpen = (accountId: string) => {
    const open = h.instancesOf(accountId).filter((i) => i['state'] === 'ASSIGNED');
    expect(open).toHaveLength(1);
    return open[0]!;
  };

  it('a review sent again and answered is closed with one call; later runs see none of it; a fresh review counts its own rounds', async () => {
    const fs = uid('fs');
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 2)) });
    await submitAndSend(h.queue(fs).queue, review);
    h.sim.control.expireFormInstances([String(onlyOpen(review.accountId)['id'])]);
    const run2 = h.queue(fs).queue;
    expect((await run2.readDecisions()).get(review.accountId)).toMatchObject({ kind: 'expired', renewed: true });
    h.sim.control.completeFormInstance(String(onlyOpen(review.accountId)['id']), { newIdentity: true });

    const run3 = h.queue(fs).queue;
    expect((await run3.readDecisions()).get(review.accountId)).toMatchObject({ kind: 'new-identity' });
    const before = closes();
    await run3.completeDecisions([review.accountId]);
    expect(closes() - before).toBe(1);

    // The next runs read nothing of that review: round 1's instance ended with round 2's.
    const run4 = h.queue(fs).queue;
    expect((await run4.readDecisions()).has(review.accountId)).toBe(false);
    // The account comes back (its connector account went away): a fresh form, in round 1 ...
    await submitAndSend(run4, review);
    const fresh = onlyOpen(review.accountId);
    expect(fresh['formInput']).toMatchObject({ round: '1' });
    // ... whose expiry is its own first one, so it is sent again.
    h.sim.control.expireFormInstances([String(fresh['id'])]);
    const run5 = h.queue(fs).queue;
    expect((await run5.readDecisions()).get(review.accountId)).toMatchObject({
      kind: 'expired',
      rounds: 1,
      renewed: true,
    });
  });

  it('an answer in round 1 closes that one instance', async () => {
    const fs = uid('fs');
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 2)) });
    await submitAndSend(h.queue(fs).queue, review);
    h.sim.control.completeFormInstance(String(onlyOpen(review.accountId)['id']), { newIdentity: true });
    const run2 = h.queue(fs).queue;
    await run2.readDecisions();
    const before = closes();
    await run2.completeDecisions([review.accountId]);
    expect(closes() - before).toBe(1);
    expect(h.instancesOf(review.accountId)).toEqual([]);
  });
});
