import { caught, clientFor, startSim, type RunningSimulator } from './support';

describe('aggregation through the platform client', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSim({ rateLimit: false });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('starts an aggregation and polls its task to the end, without experimental-API noise', async () => {
    const log = jest.spyOn(console, 'log');
    try {
      const client = clientFor(sim);
      const sourceId = sim.tenant.meta.managedSourceIds[0];
      sim.control.setAggregationOutcome(sourceId, { kind: 'succeed', afterPolls: 2 });
      const task = await client.startAggregation(sourceId);
      expect(task.id).toEqual(expect.any(String));
      expect(['PENDING', 'RUNNING']).toContain(task.state);
      const states = [];
      for (let i = 0; i < 5; i++) {
        const t = await client.getTask(task.id);
        states.push(t.state);
        if (t.state === 'SUCCESS') break;
      }
      expect(states.at(-1)).toBe('SUCCESS');
      expect(log).not.toHaveBeenCalled();
      client.close();
    } finally {
      log.mockRestore();
    }
  });

  it('reports a failed task with its messages', async () => {
    const client = clientFor(sim);
    const disabled = sim.tenant.meta.disabledSourceIds[0];
    const task = await client.startAggregation(disabled);
    let t = await client.getTask(task.id);
    for (let i = 0; i < 3 && (t.state === 'PENDING' || t.state === 'RUNNING'); i++) t = await client.getTask(task.id);
    expect(t.state).toBe('ERROR');
    expect(t.messages.join(' ')).toContain('disabled');
    client.close();
  });

  it('does not repeat a start that failed with a 5xx (not idempotent)', async () => {
    const client = clientFor(sim);
    sim.control.resetLog();
    sim.control.injectFault({ pathTemplate: '/beta/sources/{id}/load-accounts', status: 502, times: 1 });
    const err = await caught(client.startAggregation(sim.tenant.meta.managedSourceIds[0]));
    expect(err.code).toBe('PLATFORM_REQUEST_FAILED');
    expect(err.message).toContain('POST /beta/sources/{id}/load-accounts failed with HTTP 502');
    expect(sim.control.requestLog().filter((e) => e.template === '/beta/sources/{id}/load-accounts')).toHaveLength(1);
    client.close();
  });
});
