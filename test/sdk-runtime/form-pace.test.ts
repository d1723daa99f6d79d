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
  // The same tenant twice (one seed): the first run says how many forms the second will create.
  const first = await simulator();
  const { results } = await listAt(first);
  expect(results[0]!.error).toBeUndefined();
  const forms = first.tenant.formInstances.size;
  expect(forms).toBeGreaterThan(2 * width);

  const sim = await simulator();
  sim.control.injectFault({ method: 'POST', pathTemplate: INSTANCES, hold: true, times: Infinity });
  const run = listAt(sim);
  let done = false;
  void run.finally(() => (done = true));
  // Released once as many are held as the width allows, or as are left: each round shows how many
  // forms the run had under way at once.
  let released = 0;
  const held: number[] = [];
  while (released < forms) {
    const expected = Math.min(width, forms - released);
    await until(`${expected} form instances held`, () => done || sim.control.heldRequests() >= expected, 60_000);
    if (done) break;
    held.push(sim.control.heldRequests());
    released += sim.control.releaseHeld();
  }
  const [list] = (await run).results;
  expect(list!.error).toBeUndefined();
  expect(held[0]).toBe(width);
  expect(Math.max(...held)).toBe(width);
  expect(released).toBe(forms);
  expect(sim.tenant.formInstances.size).toBe(forms);
});
