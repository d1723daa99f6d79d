/**
 * A run creates its review forms several at once ("Max concurrent requests" under "Enable queue"), so
 * the rate limit, not each call's round trip, paces them; what it records stays in submission order,
 * and a failure loses nothing and creates nothing twice.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { callsInFlight } from '../../src/core/config/api-use-settings';
import type { PendingReview } from '../../src/core/ports/review-queue';
import { reviewSettings } from '../../src/core/review';
import { until } from '../support/until';
import { type Harness, candidates, pendingReview, uid, useReviewSimulator } from './support';

const INSTANCES = '/beta/form-instances';

describe('review forms created several at once', () => {
  let h: Harness;
  useReviewSimulator((x) => (h = x));
  afterEach(() => {
    h.sim.control.clearFaults();
    h.sim.control.releaseHeld();
  });

  const reviewsFor = (n: number): PendingReview[] =>
    Array.from({ length: n }, (_, i) =>
      pendingReview({ accountName: `Ann Lee ${i}`, candidates: candidates(h.identityIds().slice(0, 2)) }),
    );
  /** Definitions of the fusion source `fs` (a layout's description names its source). */
  const definitionsOf = (fs: string): number =>
    [...h.sim.tenant.formDefinitions.values()].filter((d) => String(d['description']).includes(fs)).length;

  /**
   * Releases the requests a `hold` fault holds until `work` is over; the most held at once. Before each
   * count the queue gets every chance to start more than it may.
   */
  const mostHeld = async (work: Promise<unknown>, limit: number): Promise<number> => {
    let done = false;
    void work.then(
      () => (done = true),
      () => (done = true),
    );
    let most = 0;
    let first = true;
    while (!done) {
      // Nothing is answered until released, so the first round reaches the limit whatever the machine's
      // load (a few turns of the event loop did not, on a busy CI machine); the turns after it give a
      // request beyond the limit its chance to arrive. Later rounds may hold fewer (the last forms).
      const wanted = first ? limit : 1;
      first = false;
      await until(`${wanted} request(s) held, or the work over`, () => done || h.sim.control.heldRequests() >= wanted);
      for (let i = 0; i < 20; i++) await turn();
      most = Math.max(most, h.sim.control.heldRequests());
      h.sim.control.releaseHeld();
    }
    await work;
    return most;
  };

  it('keeps formsInFlight form instances in flight, never more; one definition for a new layout; each form once', async () => {
    const fs = uid('fs');
    const { queue, log } = h.queue(fs, { formsInFlight: 4 });
    const reviews = reviewsFor(11);
    for (const r of reviews) await queue.submit(r);
    h.sim.control.injectFault({ method: 'POST', pathTemplate: INSTANCES, hold: true, times: Infinity });
    expect(await mostHeld(queue.send(), 4)).toBe(4);
    // The first four forms needed the layout's definition at once: it was created once.
    expect(definitionsOf(fs)).toBe(1);
    for (const r of reviews) expect(h.instancesOf(r.accountId)).toHaveLength(1);
    const summary = queue.summary();
    expect(summary.formsCreated).toBe(11);
    expect(summary.created.map((c) => c.accountId)).toEqual(reviews.map((r) => r.accountId));
    expect(log.at('info').filter((l) => l.msg.startsWith('Review form created for'))).toHaveLength(11);
  });

  it('records the forms in submission order when the platform answers out of order', async () => {
    const fs = uid('fs');
    const { queue } = h.queue(fs, { formsInFlight: 3 });
    const reviews = reviewsFor(7);
    for (const r of reviews) await queue.submit(r);
    const instancesOf = (): string[] =>
      [...h.sim.tenant.formInstances.values()]
        .map((i) => String((i['formInput'] as Record<string, unknown>)['accountId']))
        .filter((id) => reviews.some((r) => r.accountId === id));
    const firstWithout = (): number => reviews.findIndex((r) => !instancesOf().includes(r.accountId));
    // The first instance to reach the platform waits; the queue goes on until it must record that one
    // (held index k: forms up to k + 2 started, all but k answered).
    h.sim.control.injectFault({ method: 'POST', pathTemplate: INSTANCES, nth: 1, hold: true });
    const sent = queue.send();
    await until(
      'every started form but the held one answered',
      () => h.sim.control.heldRequests() === 1 && instancesOf().length === firstWithout() + 2,
    );
    const held = reviews[firstWithout()]!.accountId;
    h.sim.control.releaseHeld();
    await sent;
    // The platform finished a later form before the held one ...
    const platformOrder = instancesOf();
    expect(platformOrder.indexOf(held)).toBeGreaterThan(reviews.findIndex((r) => r.accountId === held));
    // ... and the run records them in the order they were submitted.
    expect(queue.summary().created.map((c) => c.accountId)).toEqual(reviews.map((r) => r.accountId));
    expect(queue.summary().pending.map((p) => p.accountId)).toEqual(reviews.map((r) => r.accountId));
  });

  it('a failed form stops the rest: the forms in flight are kept and recorded, the error is thrown, the next run creates only the missing ones', async () => {
    const fs = uid('fs');
    const reviews = reviewsFor(12);
    const { queue } = h.queue(fs, { formsInFlight: 4 });
    for (const r of reviews) await queue.submit(r);
    h.sim.control.injectFault({ method: 'POST', pathTemplate: INSTANCES, nth: 3, status: 400 });
    await expect(queue.send()).rejects.toMatchObject({ code: expect.any(String) });
    const without = reviews.flatMap((r, i) => (h.instancesOf(r.accountId).length === 0 ? [i] : []));
    // The failed form k (whichever reached the platform third: at most the 7th started) is recorded when
    // forms up to k + 3 were started: those in flight are kept, the rest were never started.
    const k = without[0]!;
    expect(without).toEqual([k, ...Array.from({ length: 12 - (k + 4) }, (_, i) => k + 4 + i)]);
    expect(without.length).toBeGreaterThan(1);
    const withForm = reviews.filter((r) => h.instancesOf(r.accountId).length === 1);
    expect(queue.summary().created.map((c) => c.accountId)).toEqual(withForm.map((r) => r.accountId));

    // The next run: every account submitted again; only those without a form get one, each once.
    const next = h.queue(fs, { formsInFlight: 4 }).queue;
    for (const r of reviews) await next.submit(r);
    await next.send();
    for (const r of reviews) expect(h.instancesOf(r.accountId)).toHaveLength(1);
    expect(next.summary().created.map((c) => reviews.findIndex((r) => r.accountId === c.accountId))).toEqual(without);
  });

  it('completes decisions and discards forms formsInFlight at a time, each form closed once', async () => {
    const fs = uid('fs');
    const reviews = reviewsFor(12);
    const first = h.queue(fs, { formsInFlight: 12 }).queue;
    for (const r of reviews) await first.submit(r);
    await first.send();
    const applied = reviews.slice(0, 7).map((r) => r.accountId);
    const { queue: next, log } = h.queue(fs, { formsInFlight: 4 });
    const patches = (): number => h.sim.control.counters().byTemplate['PATCH /beta/form-instances/{id}'] ?? 0;
    const before = patches();
    h.sim.control.injectFault({ method: 'PATCH', pathTemplate: `${INSTANCES}/{id}`, hold: true, times: Infinity });
    // An account named twice is completed once.
    expect(await mostHeld(next.completeDecisions([...applied, applied[0]!]), 4)).toBe(4);
    h.sim.control.clearFaults();
    expect(patches() - before).toBe(7);
    for (const id of applied) expect(h.instancesOf(id)).toEqual([]);

    // The other five belong to accounts a complete run no longer read.
    expect(await next.discardUnseen(new Set(applied))).toBe(5);
    expect(patches() - before).toBe(12);
    for (const r of reviews) expect(h.instancesOf(r.accountId)).toEqual([]);
    expect(log.at('info').filter((l) => /was deleted: the account no longer exists/.test(l.msg))).toHaveLength(5);
  });

  it('renews expired forms formsInFlight at a time, after one outbox write for all of them', async () => {
    const fs = h.sim.tenant.meta.fusionSourceId as string;
    const withOutbox = { platform: h.client };
    const reviews = reviewsFor(8);
    const first = h.queue(fs, { ...withOutbox, formsInFlight: 8 }).queue;
    for (const r of reviews) await first.submit(r);
    await first.send();
    const ids = reviews.map((r) => String(h.onlyInstance(r.accountId)['id']));
    expect(h.sim.control.expireFormInstances(ids)).toBe(8);

    const outboxWrites = (): number => h.sim.control.counters().byTemplate['PATCH /v3/sources/{id}'] ?? 0;
    const writes = outboxWrites();
    const next = h.queue(fs, { ...withOutbox, formsInFlight: 3 }).queue;
    h.sim.control.injectFault({ method: 'POST', pathTemplate: INSTANCES, hold: true, times: Infinity });
    const reading = next.readDecisions();
    expect(await mostHeld(reading, 3)).toBe(3);
    const decisions = await reading;
    // Owed to the reviewers before any form was sent again: one write, not one per form.
    expect(outboxWrites() - writes).toBe(1);
    const mine = [...decisions].filter(([id]) => reviews.some((r) => r.accountId === id));
    expect(mine).toHaveLength(8);
    for (const [, d] of mine) expect(d).toMatchObject({ kind: 'expired', rounds: 1, renewed: true });
    for (const r of reviews)
      expect(h.instancesOf(r.accountId).map((i) => i['state'])).toEqual(['CANCELLED', 'ASSIGNED']);
    // Recorded in the order the forms were read.
    expect(next.summary().expired.map((e) => e.accountId)).toEqual(mine.map(([id]) => id));
  });

  it('takes its width from the API settings: "Max concurrent requests" under "Enable queue", 4 without', () => {
    const base = { fusionOwnerIsGlobalReviewer: false, fusionFormExpirationDays: 7, matching: { reviewTopK: 5 } };
    const queued = { ...base, enableQueue: true, maxConcurrentRequests: 17 };
    const unqueued = { ...base, enableQueue: false, maxConcurrentRequests: 17 };
    expect(reviewSettings(queued as never).formsInFlight).toBe(17);
    expect(reviewSettings(unqueued as never).formsInFlight).toBe(4);
    expect(callsInFlight(queued)).toBe(17);
    expect(callsInFlight(unqueued)).toBe(4);
  });
});
