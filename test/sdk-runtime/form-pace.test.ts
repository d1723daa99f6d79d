/**
 * Review forms at the platform's pace in the runtime the platform drives: `_exec` of the upload
 * package, with the API-use fields left empty (the defaults an administrator gets), keeps "Max
 * concurrent requests" form instances in flight at once while a run creates its forms.
 */
import { callsInFlight, API_USE_DEFAULTS } from '../../src/core/config/api-use-settings';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { execInChild, packAndExtract } from './connector-build';
import { LOGIN_DEFINITION, tenantConnection } from '../support/tenant-config';
import { until } from '../support/until';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(180_000));

const INSTANCES = '/beta/form-instances';
/** 64 review forms under the list below. */
const TENANT = { seed: 7, tenant: { identities: 60, accountsPerSource: 200, machineRate: 0 } } as const;

let zipDir: string;
const sims: RunningSimulator[] = [];

beforeAll(() => {
  ({ dir: zipDir } = packAndExtract());
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
});

async function simulator(): Promise<RunningSimulator> {
  const sim = await startSimulator({ ...TENANT, rateLimit: false, logRequests: false });
  sims.push(sim);
  return sim;
}

/** Nothing of the API-use settings: enableQueue, maxConcurrentRequests and requestsPerSecond as shipped. */
function listAt(sim: RunningSimulator): ReturnType<typeof execInChild> {
  const config = {
    ...tenantConnection(sim),
    attributeDefinitions: [LOGIN_DEFINITION],
    matching: { attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }] },
  };
  return execInChild(`${zipDir}/index.js`, [{ type: 'std:account:list', input: {}, config }], { cwd: zipDir });
}

it("_exec of the zip's index.js with default settings: 'Max concurrent requests' review forms in flight at once", async () => {
  const width = callsInFlight(API_USE_DEFAULTS);
  const sim = await simulator();
  // Two rounds held (the tenant has more forms than that); the rest go through unheld.
  const rounds = 2;
  sim.control.injectFault({ method: 'POST', pathTemplate: INSTANCES, hold: true, times: rounds * width });
  const run = listAt(sim);
  let done = false;
  void run.finally(() => (done = true));
  const held: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await until(`${width} form instances held`, () => done || sim.control.heldRequests() >= width, 60_000);
    held.push(sim.control.heldRequests());
    sim.control.releaseHeld();
  }
  const [list] = (await run).results;
  expect(list!.error).toBeUndefined();
  expect(held).toEqual([width, width]);
  expect(sim.tenant.formInstances.size).toBeGreaterThan(rounds * width);
});
