/**
 * #28 item 3: a platform that refuses the run's last write (clearing the processing flag) after
 * every account went out. The client used to be told "Platform API request ... was cancelled"
 * (the clean-up session's deadline read as a cancel); it must hear what happened.
 */
import { createProductionRunner } from '../../src/runtime/production-runner';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import type { CommandType } from '../../src/core/command-types';
import type { CommandOutput } from '../../src/core/command-runner';
import { isFusionError } from '../../src/core/errors';
import { tenantConnection } from '../support/tenant-config';
import { context, type LogLine } from './support';

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 5,
    tenant: { identities: 20, accountsPerSource: 10, machineRate: 0 },
    rateLimit: false,
  });
});

afterAll(async () => {
  await sim.close();
});

it('every account sent, the flag clearing refused: the error says so, with the platform code', async () => {
  const lines: LogLine[] = [];
  const runner = createProductionRunner({});
  const config = { ...tenantConnection(sim), requestsPerSecond: 1000 };
  const list = (): AsyncIterable<CommandOutput> =>
    runner('std:account:list' as CommandType, {}, config, context(lines));
  const baseline: CommandOutput[] = [];
  for await (const item of list()) baseline.push(item);
  expect(baseline.length).toBeGreaterThan(0);
  const fusionId = sim.tenant.meta.fusionSourceId!;
  const patches = (): number =>
    sim.control.requestLog().filter((e) => e.method === 'PATCH' && e.path.includes(fusionId)).length;
  const before = patches();
  // The run's first PATCH of its own source sets the flag; every later one (the clearing) is refused.
  sim.control.injectFault({ method: 'PATCH', pathTemplate: '/v3/sources/{id}', nth: 2, status: 400, times: Infinity });
  let sent = 0;
  let error: unknown;
  try {
    for await (const _ of list()) sent++;
  } catch (e) {
    error = e;
  } finally {
    sim.control.clearFaults();
  }
  expect(patches() - before).toBeGreaterThanOrEqual(2);
  expect(sent).toBe(baseline.length);
  expect(isFusionError(error)).toBe(true);
  const err = error as Error & { code: string };
  expect(err.code).toBe('PLATFORM_REQUEST_FAILED');
  expect(err.message).toMatch(/sent every account, then could not clear its processing flag on the platform/);
  expect(err.message).not.toMatch(/cancelled/);
});
