/**
 * A later run's inputs read side by side, where a user has them: the production runner's platform client
 * (sailpoint-api-client over HTTP, its concurrency gate and read-ahead) against the simulator.
 */
import type { CommandType } from '../../src/core/command-types';
import type { AggregationSummary } from '../../src/core/aggregation/aggregation-summary';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { runPlatformAggregation } from '../../src/simulator/platform-aggregation';
import { tenantConnection } from '../support/tenant-config';
import { until } from '../support/until';
import { collect, context } from './support';

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 5,
    tenant: { identities: 40, accountsPerSource: 30, machineRate: 0 },
    rateLimit: false,
    logRequests: false,
  });
});

afterAll(() => sim.close());
afterEach(() => sim.control.clearFaults());

/** The connector's defaults but for the matching list. */
const config = (): Record<string, unknown> => ({
  ...tenantConnection(sim),
  matching: { attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }] },
});

/** One aggregation as the platform runs it. */
function aggregate(summaries: AggregationSummary[]) {
  const runner = createProductionRunner({ taskPollMs: 100, onAggregationSummary: (s) => summaries.push(s) });
  return runPlatformAggregation({
    tenant: sim.tenant,
    // Enabling each new account is a command of its own: not what this test is about.
    enableNew: false,
    invoke: (type, input) => runner(type as CommandType, input, config(), context()),
  });
}

const searches = (): number => sim.control.counters().byTemplate['POST /v3/search'] ?? 0;

test("a later run's identity search is answered while its first page of connector accounts is still held", async () => {
  const summaries: AggregationSummary[] = [];
  await aggregate(summaries);
  const connectorAccounts = summaries[0]!.accountsCreated;
  expect(connectorAccounts).toBeGreaterThan(0);

  // The run's first account listing is its own source's (the connector accounts): held until released.
  sim.control.injectFault({ method: 'GET', pathTemplate: '/v3/accounts', nth: 1, hold: true });
  const before = searches();
  const later = aggregate(summaries);
  // One after the other, no search would be sent until the held page is answered.
  await until(
    'an identity search answered while the connector accounts page is held',
    () => sim.control.heldRequests() === 1 && searches() > before,
  );
  expect(sim.control.releaseHeld()).toBe(1);
  await later;

  // Whole: every connector account was read (refreshed, none created again), and the baseline too.
  const second = summaries[1]!;
  expect(second.accountsUpdated).toBe(connectorAccounts);
  expect(second.accountsCreated).toBe(0);
  expect(second.baselineIdentities).toBeGreaterThan(0);
});

test('a later run cancelled while its connector accounts page is held fails as cancelled and leaves nothing held', async () => {
  if (sim.tenant.accountsOfSource(sim.tenant.meta.fusionSourceId!).size === 0) await aggregate([]);
  sim.control.injectFault({ method: 'GET', pathTemplate: '/v3/accounts', nth: 1, hold: true });
  const controller = new AbortController();
  const runner = createProductionRunner({ taskPollMs: 100 });
  const run = collect(runner('std:account:list' as CommandType, {}, config(), context([], controller.signal)));
  run.catch(() => undefined);
  await until('the connector accounts page held', () => sim.control.heldRequests() === 1);
  controller.abort();
  await expect(run).rejects.toMatchObject({ code: 'COMMAND_CANCELLED' });
  // The held request's client left: nothing of the run waits on the platform.
  await until('the held request let go', () => sim.control.heldRequests() === 0);
});
