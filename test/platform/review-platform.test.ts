import { ReviewPlatform } from '../../src/platform/review-platform';
import type { PlatformClient } from '../../src/platform/platform-client';
import { caught, clientFor, collect, startSim, type RunningSimulator } from './support';

describe('ReviewPlatform against the simulator', () => {
  let sim: RunningSimulator;
  let client: PlatformClient;
  let review: ReviewPlatform;
  beforeAll(async () => {
    sim = await startSim({ rateLimit: false });
    client = clientFor(sim, { batchSize: 2 });
    review = new ReviewPlatform(client);
  });
  afterAll(async () => {
    client.close();
    await sim.close();
  });

  it('creates, finds, and deletes form definitions; creates, lists, reads and cancels instances', async () => {
    const owner = sim.tenant.meta.ownerIdentityId ?? [...sim.tenant.identities.keys()][0];
    const names = ['Fusion Review a', 'Fusion Review b', 'Fusion Review c', 'Other form'];
    const defs = [];
    for (const name of names)
      defs.push(
        await review.createFormDefinition({
          name,
          ownerId: owner,
          formElements: [{ id: 's1', elementType: 'SECTION' }],
          formInput: [{ id: 'account', type: 'STRING', label: 'account' }],
        }),
      );
    expect(defs[0]).toMatchObject({ id: expect.any(String), name: 'Fusion Review a', ownerId: owner });

    const exact = await collect(review.searchFormDefinitions({ name: 'Fusion Review b' }));
    expect(exact.map((d) => d.id)).toEqual([defs[1].id]);
    const prefixed = await collect(review.searchFormDefinitions({ name: 'Fusion Review', prefix: true }));
    expect(prefixed.map((d) => d.name).sort()).toEqual(['Fusion Review a', 'Fusion Review b', 'Fusion Review c']); // 2 pages of 2

    const reviewers = [...sim.tenant.identities.keys()].slice(0, 3);
    const expire = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const sourceId = sim.tenant.meta.managedSourceIds[0];
    const created = [];
    for (const r of reviewers)
      created.push(
        await review.createFormInstance({
          formDefinitionId: defs[0].id,
          recipientIds: [r],
          expire,
          formInput: { account: 'acc-1' },
          createdBySourceId: sourceId,
        }),
      );
    expect(created[0]).toMatchObject({
      formDefinitionId: defs[0].id,
      state: 'ASSIGNED',
      recipientIds: [reviewers[0]],
      expire,
      formInput: { account: 'acc-1' },
    });

    const listed = await collect(review.listFormInstances(defs[0].id));
    expect(listed.map((i) => i.id).sort()).toEqual(created.map((i) => i.id).sort());
    expect(await collect(review.listFormInstances(defs[1].id))).toEqual([]);

    sim.control.completeFormInstance(created[1].id, { decision: 'new' });
    const done = await review.getFormInstance(created[1].id);
    expect(done).toMatchObject({ state: 'COMPLETED', formData: { decision: 'new' } });
    expect(await review.getFormInstance('no-such-instance')).toBeUndefined();

    const cancelled = await review.setFormInstanceState(created[0].id, 'CANCELLED');
    expect(cancelled.state).toBe('CANCELLED');

    await review.deleteFormDefinition(defs[3].id);
    await review.deleteFormDefinition(defs[3].id); // already gone: fine
    expect(await collect(review.searchFormDefinitions({ name: 'Other form' }))).toEqual([]);
  });

  it('finds a reviewer access profile by exact name and the identities holding it', async () => {
    const ap = [...sim.tenant.accessProfiles.values()][0];
    const found = await review.findAccessProfileByName(ap.name);
    expect(found).toMatchObject({ id: ap.id, name: ap.name, sourceId: ap.sourceId });
    expect(await review.findAccessProfileByName(ap.name.toUpperCase())).toBeUndefined();
    const holders = await collect(review.identitiesWithAccessProfile(ap.id));
    const expected = [...sim.tenant.identities.values()].filter((i) => i.access.includes(ap.id)).map((i) => i.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(holders.map((h) => h.id).sort()).toEqual(expected.sort());
  });

  it('lists, creates and runs workflows', async () => {
    const owner = [...sim.tenant.identities.keys()][0];
    const wf = await review.createWorkflow({
      name: 'Fusion notifications',
      ownerId: owner,
      definition: { start: 'Send Email', steps: {} },
      trigger: { type: 'EXTERNAL', attributes: {} },
    });
    expect(wf).toMatchObject({ name: 'Fusion notifications', enabled: false });
    expect((await collect(review.listWorkflows())).map((w) => w.id)).toContain(wf.id);
    const run = await review.runWorkflow(wf.id, {
      subject: 'Review',
      body: 'Please review',
      recipients: ['a@example.com'],
    });
    expect(run.executionId).toEqual(expect.any(String));
    expect(sim.control.workflowRuns().at(-1)).toMatchObject({ workflowId: wf.id, input: { subject: 'Review' } });
  });

  it('is reachable from the platform session the core receives', async () => {
    const fromSession = client.reviews();
    expect(await fromSession.findAccessProfileByName('no such profile')).toBeUndefined();
  });

  it('a form call without sp:forms:manage names that scope', async () => {
    sim.control.addClient({ clientId: 'no-forms', clientSecret: 'no-forms-secret', scopes: ['sp:accounts:read'] });
    const narrow = clientFor(sim, { clientId: 'no-forms', clientSecret: 'no-forms-secret' });
    const err = await caught(collect(new ReviewPlatform(narrow).searchFormDefinitions({ name: 'x' })));
    expect(err.code).toBe('PLATFORM_FORBIDDEN');
    expect(err.message).toContain('sp:forms:manage');
    expect(err.message).toContain('GET /beta/form-definitions');
    narrow.close();
  });
});
