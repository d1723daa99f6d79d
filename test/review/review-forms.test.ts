import {
  resolveReviewers,
  NOTIFICATION_WORKFLOW,
  readReviewDecisions,
  type ReviewDecision,
} from '../../src/core/review';
import { METRIC } from '../../src/observability/metric-names';
import { registry } from '../../src/observability/metrics-registry';
import { type Harness, candidates, pendingReview, submitAndSend, uid, useReviewSimulator } from './support';

const DAY = 86_400_000;

async function formsCreatedMetric(): Promise<number> {
  const m = await registry.getSingleMetric(METRIC.reviewFormsCreated)?.get();
  return m?.values[0]?.value ?? 0;
}

/** A fresh fusion-source namespace. */
const ns = (): string => uid('fs');

describe('review forms against the simulator', () => {
  let h: Harness;
  useReviewSimulator((x) => (h = x));

  it('an account with 300 candidates gets a form detailing the best 10, saying "10 of 300", and keeping all 300', async () => {
    const identities = h.identityIds();
    const ids = Array.from({ length: 300 }, (_, i) =>
      i < identities.length ? (identities[i] as string) : `cand${String(i).padStart(3, '0')}`,
    );
    // scores in shuffled order: the form must rank them
    const scores = ids.map((_, i) => (i === 3 ? 99.9 : 60 + ((i * 37) % 300) / 10));
    const review = pendingReview({ candidates: h.withDetails(candidates(ids, (i) => scores[i] as number)) });
    const { queue } = h.queue(ns());
    const before = await formsCreatedMetric();
    await submitAndSend(queue, review);

    // One shared definition of the layout; the instance shows the account's own content.
    const rendered = h.onlyInstance(review.accountId);
    const def = h.definitionOf(rendered);
    expect(def['name']).toMatch(/^Fusion Review - shared layout [0-9a-f]{16}$/);
    expect(JSON.stringify(def)).not.toContain(review.accountId);
    expect(JSON.stringify(def)).not.toContain('Ann Lee');
    const sections = rendered['formElements'] as Array<{
      id: string;
      config: { label: string; formElements: Array<{ key: string; config: Record<string, unknown> }> };
    }>;
    const detailed = sections.find((s) => s.id === 'candidates')!;
    expect(detailed.config.label).toMatch(/^Showing 10 of 300 candidates/);
    expect(detailed.config.formElements).toHaveLength(10);
    const all = sections.find((s) => s.id === 'allCandidates')!.config.formElements[0]!.config['default'] as string;
    expect(all.split('\n')).toHaveLength(300);
    const select = sections.find((s) => s.id === 'decision')!.config.formElements.find((e) => e.key === 'identity')!;
    expect((select.config['dataSource'] as { config: { options: unknown[] } }).config.options).toHaveLength(300);

    const inst = h.onlyInstance(review.accountId);
    const input = inst['formInput'] as Record<string, string>;
    expect(input).toMatchObject({
      accountId: review.accountId,
      candidatesTotal: '300',
      candidatesShown: '10',
      round: '1',
    });
    const stored = JSON.parse(input['candidates'] as string) as Array<{ id: string; score: number }>;
    expect(stored).toHaveLength(300);
    expect(new Set(stored.map((c) => c.id))).toEqual(new Set(ids));
    for (let i = 1; i < stored.length; i++) expect(stored[i - 1]!.score).toBeGreaterThanOrEqual(stored[i]!.score);
    // The best candidate is a real identity: its display name heads the first candidate section.
    expect(stored[0]!.id).toBe(ids[3]);
    const best = detailed.config.formElements[0] as unknown as { config: { label: string } };
    expect(best.config.label).toBe(
      `#1 ${h.sim.tenant.identities.get(ids[3] as string)!.name} (identity ${ids[3]}), score 99.9`,
    );

    const summary = queue.summary();
    expect(summary.formsCreated).toBe(1);
    expect(summary.created[0]).toMatchObject({
      accountId: review.accountId,
      candidatesTotal: 300,
      candidatesShown: 10,
    });
    expect(summary.pending.map((p) => p.accountId)).toEqual([review.accountId]);
    expect(await formsCreatedMetric()).toBe(before + 1);
    const [run] = h.runsFor(review.accountId);
    expect(run!.body).toContain('Best 3 of 300 candidates');
    expect(run!.body.split('\n').filter((l) => /^ +\d+\. /.test(l))).toHaveLength(3);
  });

  it('resolves reviewers: "<source> Reviewer" holders, plus the owner only with "Owner is global reviewer?", exact names', async () => {
    const owner = { id: h.ownerId, name: 'owner' };
    const ports = { review: h.review, platform: h.client };
    const holders = h.holders('LDAP');
    expect(holders.length).toBeGreaterThan(0);

    const off = await resolveReviewers(ports, { sourceName: 'LDAP', owner, ownerIsGlobalReviewer: false });
    expect(off.reviewers.map((r) => r.id).sort()).toEqual([...holders].sort());
    expect(off.reviewers.every((r) => r.via.includes('access-profile') && r.email?.includes('@'))).toBe(true);
    expect(off.problems).toEqual([]);

    const on = await resolveReviewers(ports, { sourceName: 'LDAP', owner, ownerIsGlobalReviewer: true });
    expect(on.reviewers.map((r) => r.id).sort()).toEqual([...new Set([...holders, h.ownerId])].sort());
    expect(on.reviewers.find((r) => r.id === h.ownerId)?.via).toContain('owner');

    const wrongCase = await resolveReviewers(ports, { sourceName: 'ldap', owner, ownerIsGlobalReviewer: false });
    expect(wrongCase.reviewers).toEqual([]);
    expect(wrongCase.problems.join(' ')).toContain('"ldap Reviewer" does not exist');
    expect(wrongCase.problems.join(' ')).toContain('"Owner is global reviewer?" is off');

    const ownerOnly = await resolveReviewers(ports, {
      sourceName: 'No Such Source',
      owner,
      ownerIsGlobalReviewer: true,
    });
    expect(ownerOnly.reviewers.map((r) => r.id)).toEqual([h.ownerId]);
  });

  it('with no reviewer at all: an error line and a summary entry, no form, and the same again next run', async () => {
    const review = pendingReview({ sourceName: 'Unreviewed', candidates: candidates(['x1']) });
    for (let run = 0; run < 2; run++) {
      const { queue, log } = h.queue(ns());
      await submitAndSend(queue, review);
      expect(h.instancesOf(review.accountId)).toEqual([]);
      const errors = log.at('error');
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toContain('No reviewer for the potential duplicate Ann Lee [Unreviewed]');
      expect(errors[0]!.msg).toContain('"Unreviewed Reviewer" does not exist');
      expect(queue.summary().noReviewer).toEqual([
        {
          accountId: review.accountId,
          accountName: 'Ann Lee',
          sourceName: 'Unreviewed',
          reason: expect.stringContaining('"Owner is global reviewer?" is off'),
        },
      ]);
      queue.logSummary();
      expect(log.at('error').at(-1)!.obj).toMatchObject({ noReviewer: 1 });
    }
    // The owner as global reviewer makes the review possible.
    const { queue } = h.queue(ns(), { ownerIsGlobalReviewer: true });
    await submitAndSend(queue, review);
    expect(h.onlyInstance(review.accountId)['recipients']).toEqual([{ type: 'IDENTITY', id: h.ownerId }]);
  });

  it('is idempotent: the same account submitted twice (sequentially, concurrently, in a later run) has one form', async () => {
    const fs = ns();
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 2)) });
    const { queue } = h.queue(fs);
    await Promise.all([queue.submit(review), queue.submit(review)]);
    await queue.submit(review);
    await queue.send();
    await submitAndSend(h.queue(fs).queue, review);
    expect(h.instancesOf(review.accountId)).toHaveLength(1);
    expect(h.runsFor(review.accountId)).toHaveLength(1);
    expect(queue.summary().formsCreated).toBe(1);

    // Two accounts with the same display name never share a form.
    const twin = pendingReview({ candidates: candidates(h.identityIds().slice(0, 2)) });
    await submitAndSend(queue, twin);
    expect(h.instancesOf(twin.accountId)).toHaveLength(1);
    expect(h.instancesOf(twin.accountId)[0]!['id']).not.toBe(h.instancesOf(review.accountId)[0]!['id']);
    // ... but the same layout's definition.
    expect(h.instancesOf(twin.accountId)[0]!['formDefinitionId']).toBe(
      h.instancesOf(review.accountId)[0]!['formDefinitionId'],
    );
  });

  it('one message per reviewer per run, listing how many forms and linking each, through one workflow created once', async () => {
    const { queue } = h.queue(ns(), { ownerIsGlobalReviewer: true });
    const a = pendingReview({ candidates: candidates(h.identityIds().slice(0, 3)) });
    const a2 = pendingReview({ accountName: 'Bo Ray', candidates: candidates(h.identityIds().slice(1, 2)) });
    const b = pendingReview({ sourceName: 'Contractors', candidates: candidates(h.identityIds().slice(3, 4)) });
    const runsBefore = h.sim.control.workflowRuns().length;
    await submitAndSend(queue, a, a2, b);
    const workflows = [...h.sim.tenant.workflows.values()].filter((w) => w['name'] === NOTIFICATION_WORKFLOW);
    expect(workflows).toHaveLength(1);
    const runs = h.sim.control.workflowRuns().slice(runsBefore);
    expect(runs.every((r) => r.workflowId === workflows[0]!['id'])).toBe(true);
    const emailOf = (id: string): string => String(h.sim.tenant.identities.get(id)?.attributes['email']);
    const ldap = h.holders('LDAP').filter((id) => id !== h.ownerId);
    const contractors = h.holders('Contractors').filter((id) => id !== h.ownerId);
    // Every reviewer is told once: the owner (global reviewer) of all three forms, the others of theirs.
    const received = (id: string): Array<{ subject: string; body: string }> =>
      runs
        .map((r) => r.input as { subject: string; body: string; recipients: string[] })
        .filter((r) => r.recipients.includes(emailOf(id)));
    const reviewers = [...new Set([h.ownerId, ...ldap, ...contractors])];
    for (const id of reviewers) expect(received(id)).toHaveLength(1);
    expect(runs.length).toBeLessThanOrEqual(reviewers.length);
    const [own] = received(h.ownerId);
    expect(own!.subject).toBe('Identity Fusion review required: 3 review forms');
    expect(own!.body).toContain('3 review forms are waiting for you');
    for (const r of [a, a2, b]) {
      expect(own!.body).toContain(`(id ${r.accountId})`);
      expect(own!.body).toContain(String(h.onlyInstance(r.accountId)['standAloneFormUrl']));
    }
    const onlyLdap = ldap.find((id) => !contractors.includes(id));
    if (onlyLdap) {
      const [mine] = received(onlyLdap);
      expect(mine!.subject).toBe('Identity Fusion review required: 2 review forms');
      expect(mine!.body).not.toContain(b.accountId);
    }
    expect(queue.summary().notificationsSent).toBe(runs.length);
  });

  it('a failed notification is a warning and a summary entry; the form is still created and pending', async () => {
    const { queue, log } = h.queue(ns());
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 1)) });
    h.sim.control.injectFault({ method: 'POST', pathTemplate: '/v3/workflows/{id}/test', status: 400 });
    try {
      await submitAndSend(queue, review);
    } finally {
      h.sim.control.clearFaults();
    }
    expect(h.instancesOf(review.accountId)).toHaveLength(1);
    const s = queue.summary();
    expect(s.notificationsSent).toBe(0);
    expect(s.notificationProblems).toEqual([
      expect.objectContaining({
        accountId: review.accountId,
        reason: expect.stringContaining('notification workflow failed'),
      }),
    ]);
    expect(s.pending.map((p) => p.accountId)).toEqual([review.accountId]);
    expect(log.at('warn').some((l) => l.msg.includes('were not notified'))).toBe(true);
  });

  it('reads decisions: new identity, two links to the same identity, pending (listed), SUBMITTED pending, invalid (loud, re-formed)', async () => {
    const fs = ns();
    const ids = h.identityIds();
    const target = ids[5] as string;
    const mk = (): ReturnType<typeof pendingReview> =>
      pendingReview({ candidates: candidates([target, ids[6] as string, ids[7] as string]) });
    const [fresh, linkA, linkB, waiting, submitted, garbled] = [mk(), mk(), mk(), mk(), mk(), mk()];
    const run1 = h.queue(fs).queue;
    await submitAndSend(run1, fresh, linkA, linkB, waiting, submitted, garbled);

    const complete = (accountId: string, data: Record<string, unknown>, state?: 'SUBMITTED'): void => {
      h.sim.control.completeFormInstance(String(h.onlyInstance(accountId)['id']), data, state ? { state } : undefined);
    };
    complete(fresh.accountId, { newIdentity: true });
    complete(linkA.accountId, { newIdentity: 'false', identity: target });
    complete(linkB.accountId, { identity: [target], comments: 'same employee number' });
    complete(submitted.accountId, { newIdentity: true }, 'SUBMITTED');
    complete(garbled.accountId, { newIdentity: 'yes' });

    const { queue: run2, log } = h.queue(fs);
    const d = await run2.readDecisions();
    expect(d.get(fresh.accountId)).toMatchObject({ kind: 'new-identity', accountName: 'Ann Lee', sourceName: 'LDAP' });
    expect(d.get(linkA.accountId)).toMatchObject({ kind: 'link', identityId: target, candidateKind: 'identity' });
    expect(d.get(linkB.accountId)).toMatchObject({
      kind: 'link',
      identityId: target,
      comments: 'same employee number',
    });
    expect(d.get(waiting.accountId)).toMatchObject({
      kind: 'pending',
      state: 'ASSIGNED',
      reviewers: expect.arrayContaining(h.holders('LDAP')),
    });
    expect(d.get(submitted.accountId)).toMatchObject({ kind: 'pending', state: 'SUBMITTED' });
    expect(d.get(garbled.accountId)).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('"yes"') });
    expect(d.size).toBe(6);

    const s = run2.summary();
    expect(s.decided.map((x) => x.accountId).sort()).toEqual(
      [fresh.accountId, linkA.accountId, linkB.accountId].sort(),
    );
    expect(s.decided.filter((x) => x.identityId === target)).toHaveLength(2);
    expect(s.pending.map((p) => p.accountId).sort()).toEqual([waiting.accountId, submitted.accountId].sort());
    expect(s.pending[0]).toMatchObject({
      ageDays: expect.any(Number),
      reviewers: expect.any(Array),
      since: expect.any(String),
    });
    expect(s.invalid).toEqual([expect.objectContaining({ accountId: garbled.accountId })]);
    expect(log.at('error')[0]!.msg).toContain('cannot be applied');
    expect(h.instancesOf(garbled.accountId)).toEqual([]); // closed: the account gets a new form

    // A decided account is not re-formed before the aggregation completes the decision.
    await run2.submit(fresh);
    expect(h.instancesOf(fresh.accountId)).toHaveLength(1);
    await run2.completeDecisions([fresh.accountId, linkA.accountId, linkB.accountId]);
    for (const id of [fresh.accountId, linkA.accountId, linkB.accountId]) expect(h.instancesOf(id)).toEqual([]);
    await submitAndSend(run2, garbled);
    expect(h.instancesOf(garbled.accountId)).toHaveLength(1);

    // The read-only reader agrees and sees the rest.
    const again = await readReviewDecisions(h.review, { fusionSourceId: fs });
    expect(new Map([...again].map(([k, v]) => [k, v.kind]))).toEqual(
      new Map<string, ReviewDecision['kind']>([
        [waiting.accountId, 'pending'],
        [submitted.accountId, 'pending'],
        [garbled.accountId, 'pending'],
      ]),
    );
    // Another fusion source's reader sees none of these forms.
    expect((await readReviewDecisions(h.review, { fusionSourceId: ns() })).size).toBe(0);
  });

  it('expiry: sent again once with a fresh expiry and a warning, then reported as "review expired" every run', async () => {
    const fs = ns();
    const review = pendingReview({ candidates: candidates(h.identityIds().slice(0, 12)) });
    await submitAndSend(h.queue(fs).queue, review);
    const first = h.onlyInstance(review.accountId);
    expect(h.sim.control.expireFormInstances([String(first['id'])])).toBe(1);

    const run2 = h.queue(fs);
    const before = await formsCreatedMetric();
    const d2 = (await run2.queue.readDecisions()).get(review.accountId);
    expect(d2).toMatchObject({ kind: 'expired', rounds: 1, renewed: true, expiresAt: expect.any(String) });
    expect(await formsCreatedMetric()).toBe(before + 1);
    const instances = h.instancesOf(review.accountId);
    expect(instances.map((i) => i['state'])).toEqual(['CANCELLED', 'ASSIGNED']);
    const second = instances[1]!;
    expect(second['formInput']).toMatchObject({ round: '2', candidatesTotal: '12', accountId: review.accountId });
    expect(Date.parse(String(second['expire']))).toBeGreaterThan(Date.now() + 6.9 * DAY);
    expect(run2.log.at('warn').some((l) => l.msg.includes('was sent again (round 2 of 2)'))).toBe(true);
    expect(run2.queue.summary().expired).toEqual([
      expect.objectContaining({ accountId: review.accountId, renewed: true, rounds: 1 }),
    ]);
    expect(run2.queue.summary().pending.map((p) => p.accountId)).toEqual([review.accountId]);
    await run2.queue.send();
    const runs = h.runsFor(review.accountId);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.body).toContain('sent again');

    h.sim.control.expireFormInstances([String(second['id'])]);
    for (let run = 0; run < 2; run++) {
      const r = h.queue(fs);
      const d = (await r.queue.readDecisions()).get(review.accountId);
      expect(d).toMatchObject({ kind: 'expired', rounds: 2, renewed: false });
      expect(r.log.at('warn').filter((l) => l.msg.startsWith('Review expired:'))).toHaveLength(1);
      expect(r.queue.summary().expired).toEqual([
        expect.objectContaining({ accountId: review.accountId, renewed: false, rounds: 2 }),
      ]);
      await submitAndSend(r.queue, review); // no new form (nor message) while the expired one exists
      expect(h.instancesOf(review.accountId)).toHaveLength(2);
    }
    expect(h.runsFor(review.accountId)).toHaveLength(2);

    // The operator closes the instances, as the warning says: the next run sends a fresh review.
    const warning = h.queue(fs);
    await warning.queue.readDecisions();
    const said = warning.log.at('warn').find((l) => l.msg.startsWith('Review expired:'))!;
    expect(said.msg).toContain('close its form instance(s)');
    for (const id of said.obj['instances'] as string[]) await h.review.closeFormInstance(id, 'operator', false);
    const r = h.queue(fs);
    expect((await r.queue.readDecisions()).has(review.accountId)).toBe(false);
    await submitAndSend(r.queue, review);
    expect(h.onlyInstance(review.accountId)['formInput']).toMatchObject({ round: '1' });
  });

  it('an open instance past its expiry counts as expired even if the platform did not cancel it', async () => {
    const fs = ns();
    const review = pendingReview({
      candidates: candidates(h.identityIds().slice(0, 2)),
      expiresAt: new Date(Date.now() + DAY).toISOString(),
    });
    await submitAndSend(h.queue(fs).queue, review);
    const later = new Date(Date.now() + 2 * DAY);
    const { queue } = h.queue(fs, { now: () => later });
    expect((await queue.readDecisions()).get(review.accountId)).toMatchObject({ kind: 'expired', renewed: true });
    expect(h.instancesOf(review.accountId).map((i) => i['state'])).toEqual(['CANCELLED', 'ASSIGNED']);
  });

  it('deletes a definition left without an instance, so that the account gets a whole new form', async () => {
    const fs = ns();
    const accountId = uid();
    await h.review.createFormDefinition({
      name: `Fusion Review - Bo [LDAP] #${accountId}`,
      description: `half made [fusion-source:${fs}]`,
      ownerId: h.ownerId,
      formElements: [],
    });
    const { queue, log } = h.queue(fs);
    expect((await queue.readDecisions()).has(accountId)).toBe(false);
    expect(h.definitionsOf(accountId)).toEqual([]);
    expect(log.at('warn')[0]!.msg).toContain('had no form instance');
  });

  it('discards the forms of accounts that no longer exist (after a complete run), and only those', async () => {
    const fs = ns();
    const kept = pendingReview({ candidates: candidates(h.identityIds().slice(0, 1)) });
    const gone = pendingReview({ candidates: candidates(h.identityIds().slice(0, 1)) });
    const { queue } = h.queue(fs);
    await submitAndSend(queue, kept, gone);
    expect(await h.queue(fs).queue.discardUnseen(new Set([kept.accountId]))).toBe(1);
    expect(h.instancesOf(gone.accountId)).toEqual([]);
    expect(h.instancesOf(kept.accountId)).toHaveLength(1);
  });

  it('refuses nonsensical settings with CONFIG_INVALID', () => {
    expect(() => h.queue(ns(), { expirationDays: 0 })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    expect(() => h.queue(ns(), { topK: 0 })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});
