import {
  AccessProfilesApi,
  AccountAggregationsBetaApi,
  CustomFormsBetaApi,
  CustomFormsV2024Api,
  Index,
  SearchApi,
  SourcesBetaApi,
  SourcesV2024Api,
  TaskManagementBetaApi,
  TaskManagementV2024Api,
  WorkflowsApi,
} from 'sailpoint-api-client';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { failure, testClient, type TestClient } from './client';

let sim: RunningSimulator;
let c: TestClient;
const consoleLog = console.log;

beforeAll(async () => {
  console.log = () => undefined;
  sim = await startSimulator({ seed: 11, tenant: { identities: 30, accountsPerSource: 10 }, rateLimit: false });
  c = await testClient(sim);
});

afterAll(async () => {
  console.log = consoleLog;
  await sim.close();
});

const owner = () => ({ type: 'IDENTITY' as const, id: sim.tenant.meta.ownerIdentityId as string });

describe('custom forms', () => {
  it('creates, searches and deletes definitions; instances follow their definition', async () => {
    const forms = new CustomFormsBetaApi(c.cfg, undefined, c.http);
    const def = await forms.createFormDefinition({
      createFormDefinitionRequestBeta: {
        name: 'Fusion Review - Ann [LDAP]',
        owner: owner(),
        formElements: [{ id: 'e1', elementType: 'TOGGLE', key: 'newIdentity' }],
      },
    });
    expect(def.status).toBe(201);
    const defId = def.data.id as string;
    await forms.createFormDefinition({ createFormDefinitionRequestBeta: { name: 'Something else', owner: owner() } });
    const found = await forms.searchFormDefinitionsByTenant({ filters: 'name sw "Fusion Review"' });
    expect(found.data.count).toBe(1);
    expect(found.data.results?.[0]?.id).toBe(defId);

    const expire = new Date(Date.now() + 86_400_000).toISOString();
    const recipient = [...sim.tenant.identities.keys()][2] as string;
    const inst = await forms.createFormInstance({
      body: {
        formDefinitionId: defId,
        expire,
        recipients: [{ type: 'IDENTITY', id: recipient }],
        createdBy: { type: 'SOURCE', id: sim.tenant.meta.fusionSourceId },
        standAloneForm: true,
        formInput: { account: 'a1' },
      },
    });
    expect(inst.status).toBe(201);
    expect(inst.data).toMatchObject({ state: 'ASSIGNED', formDefinitionId: defId, standAloneForm: true });
    expect(inst.data.standAloneFormUrl).toContain(inst.data.id as string);

    const list = await forms.searchFormInstancesByTenant({ params: { filters: `formDefinitionId eq "${defId}"` } });
    const listed = list.data as unknown as { count: number; results: { id: string }[] };
    expect(listed.results.map((r) => r.id)).toEqual([inst.data.id]);

    // a simulated reviewer answers
    sim.control.completeFormInstance(inst.data.id as string, { newIdentity: false, identities: [recipient] });
    const got = await forms.getFormInstanceByKey({ formInstanceID: inst.data.id as string });
    expect(got.data).toMatchObject({ state: 'COMPLETED', formData: { newIdentity: false, identities: [recipient] } });

    // v2024 sees the same store; patch state
    const v24 = new CustomFormsV2024Api(c.cfg, undefined, c.http);
    const inst2 = await v24.createFormInstance({
      xSailPointExperimental: 'true',
      body: {
        formDefinitionId: defId,
        expire,
        recipients: [{ type: 'IDENTITY', id: recipient }],
        createdBy: { type: 'SOURCE', id: 'x' },
      },
    });
    const stateOp = { op: 'replace', path: '/state', value: 'IN_PROGRESS' } as unknown as { [key: string]: object };
    const patched = await v24.patchFormInstance({
      xSailPointExperimental: 'true',
      formInstanceID: inst2.data.id as string,
      body: [stateOp],
    });
    expect(patched.data.state).toBe('IN_PROGRESS');
    expect(sim.control.expireFormInstances()).toBe(1);
    expect(
      (await v24.getFormInstanceByKey({ xSailPointExperimental: 'true', formInstanceID: inst2.data.id as string })).data
        .state,
    ).toBe('CANCELLED');

    expect((await forms.deleteFormDefinition({ formDefinitionID: defId })).status).toBe(204);
    expect((await failure(forms.getFormInstanceByKey({ formInstanceID: inst.data.id as string }))).status).toBe(404);
  });

  it('rejects an instance for a missing definition or without recipients', async () => {
    const forms = new CustomFormsBetaApi(c.cfg, undefined, c.http);
    const expire = new Date().toISOString();
    expect(
      (
        await failure(
          forms.createFormInstance({
            body: { formDefinitionId: 'nope', expire, recipients: [{ type: 'IDENTITY', id: 'x' }], createdBy: {} },
          }),
        )
      ).status,
    ).toBe(400);
    const def = await forms.createFormDefinition({ createFormDefinitionRequestBeta: { name: 'F', owner: owner() } });
    expect(
      (
        await failure(
          forms.createFormInstance({
            body: { formDefinitionId: def.data.id as string, expire, recipients: [], createdBy: {} },
          }),
        )
      ).status,
    ).toBe(400);
  });
});

describe('workflows', () => {
  it('creates a workflow and records test runs', async () => {
    const api = new WorkflowsApi(c.cfg, undefined, c.http);
    const wf = await api.createWorkflow({
      createWorkflowRequest: {
        name: 'Fusion Email Sender (sim)',
        owner: { type: 'IDENTITY', id: owner().id },
        trigger: { type: 'EXTERNAL', attributes: { id: 'idn:external-http', frequency: 'daily' } },
      },
    });
    const id = wf.data.id as string;
    expect((await api.listWorkflows()).data.map((w) => w.name)).toContain('Fusion Email Sender (sim)');
    await api.patchWorkflow({ id, jsonPatchOperation: [{ op: 'replace', path: '/enabled', value: false }] });
    const run = await api.testWorkflow({
      id,
      testWorkflowRequest: { input: { subject: 'Review', body: '<p>hi</p>', recipients: ['a@x'] } },
    });
    expect(run.data.workflowExecutionId).toMatch(/^[0-9a-f]{32}$/);
    expect(sim.control.workflowRuns()).toEqual([
      {
        workflowId: id,
        executionId: run.data.workflowExecutionId,
        input: { subject: 'Review', body: '<p>hi</p>', recipients: ['a@x'] },
        at: expect.any(String),
      },
    ]);
  });
});

describe('access profiles', () => {
  it('finds the reviewer profile by name and its holders by identity search', async () => {
    const api = new AccessProfilesApi(c.cfg, undefined, c.http);
    const res = await api.listAccessProfiles({ filters: 'name eq "LDAP Reviewer"' });
    expect(res.data).toHaveLength(1);
    expect(res.data[0]?.source).toMatchObject({ id: sim.tenant.meta.fusionSourceId, name: 'Identity Fusion' });
    const holders = await new SearchApi(c.cfg, undefined, c.http).searchPost({
      search: { indices: [Index.Identities], query: { query: `access.id:"${res.data[0]?.id}"` } },
    });
    expect(holders.data).toHaveLength(2);
    expect(holders.data[0]).toMatchObject({
      access: [expect.objectContaining({ id: res.data[0]?.id, type: 'ACCESS_PROFILE' })],
    });
  });
});

describe('aggregation tasks', () => {
  const hr = () => [...sim.tenant.sources.values()].find((s) => s.name === 'HR')?.id as string;

  it('succeeds after the configured number of polls (beta)', async () => {
    sim.control.setAggregationOutcome(hr(), { kind: 'succeed', afterPolls: 2 });
    const started = await new SourcesBetaApi(c.cfg, undefined, c.http).importAccounts({ sourceId: hr() });
    expect(started.status).toBe(202);
    const taskId = started.data.task?.id as string;
    const tasks = new TaskManagementBetaApi(c.cfg, undefined, c.http);
    expect((await tasks.getTaskStatus({ id: taskId })).data.completionStatus).toBeNull();
    const done = await tasks.getTaskStatus({ id: taskId });
    expect(done.data).toMatchObject({ completionStatus: 'SUCCESS', target: { id: hr(), type: 'SOURCE' } });
    expect(
      (await new AccountAggregationsBetaApi(c.cfg, undefined, c.http).getAccountAggregationStatus({ id: taskId })).data
        .status,
    ).toBe('COMPLETED');
    const events = await new SearchApi(c.cfg, undefined, c.http).searchPost({
      search: {
        indices: [Index.Events],
        query: { query: 'operation:AGGREGATE AND status:PASSED AND target.name.exact:"HR [source]"' },
        sort: ['-created'],
      },
      limit: 1,
    });
    expect((events.data[0] as { attributes: { taskId?: string } }).attributes.taskId).toBe(taskId);
  });

  it('fails with a message, or never finishes (v2024)', async () => {
    const sources = new SourcesV2024Api(c.cfg, undefined, c.http);
    const tasks = new TaskManagementV2024Api(c.cfg, undefined, c.http);
    sim.control.setAggregationOutcome(hr(), { kind: 'fail', afterPolls: 1, message: 'Connector timed out' });
    const failed = await sources.importAccounts({ id: hr() });
    const st = await tasks.getTaskStatus({ id: failed.data.task?.id as string });
    expect(st.data.completionStatus).toBe('ERROR');
    expect(st.data.messages[0]?.localizedText?.message).toBe('Connector timed out');

    sim.control.setAggregationOutcome(hr(), { kind: 'never' });
    const stuck = await sources.importAccounts({ id: hr() });
    for (let i = 0; i < 5; i++)
      expect((await tasks.getTaskStatus({ id: stuck.data.task?.id as string })).data.completionStatus).toBeNull();
  });

  it('fails the aggregation of a disabled source and runs the success hook otherwise', async () => {
    const legacy = sim.tenant.meta.disabledSourceIds[0] as string;
    const sources = new SourcesBetaApi(c.cfg, undefined, c.http);
    const tasks = new TaskManagementBetaApi(c.cfg, undefined, c.http);
    const t = await sources.importAccounts({ sourceId: legacy });
    expect((await tasks.getTaskStatus({ id: t.data.task?.id as string })).data.completionStatus).toBe('ERROR');

    const seen: string[] = [];
    sim.control.onAggregationSuccess((id) => {
      seen.push(id);
    });
    const fusion = sim.tenant.meta.fusionSourceId as string;
    const t2 = await sources.importAccounts({ sourceId: fusion });
    expect((await tasks.getTaskStatus({ id: t2.data.task?.id as string })).data.completionStatus).toBe('SUCCESS');
    expect(seen).toEqual([fusion]);
    sim.control.onAggregationSuccess(undefined);
  });
});
