/**
 * Both matching models through the SDK's `_exec` of the upload package, at the platform's default
 * log level (unset): a full `std:account:list` with matching on reads the simulator's accounts,
 * opens review forms for its planted duplicates and, with the probabilistic model, estimates the
 * parameters over every new account in one call (several of the owner's chunks: the run yields the
 * event loop between them) and stores them on the connector source.
 */
import { MODEL_PARAMETERS_KEY } from '../../src/core/aggregation/model-parameters';
import type { ModelParameters } from '../../src/core/matching/types';
import { OWNER_CHUNK } from '../../src/core/matching/parallel/loop-turns';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { execInChild, packAndExtract } from './connector-build';
import { LOGIN_DEFINITION, tenantConnection } from '../support/tenant-config';
import { scaled } from '../support/time-factor';

jest.setTimeout(scaled(180_000));

const MODELS = {
  rules: { attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }] },
  probabilistic: {
    model: 'probabilistic',
    attributes: [
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
      { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
      { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
    ],
  },
} as const;

let zipDir: string;

beforeAll(() => {
  ({ dir: zipDir } = packAndExtract());
});

describe.each(Object.keys(MODELS) as Array<keyof typeof MODELS>)('matching model %s, LOG_LEVEL unset', (model) => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({
      seed: 7,
      tenant: { identities: 60, accountsPerSource: 200, machineRate: 0 },
      rateLimit: false,
      logRequests: false,
    });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it("_exec of the zip's index.js: std:account:list reads every account, opens forms, stores what it estimated", async () => {
    const config = {
      ...tenantConnection(sim),
      requestsPerSecond: 1000,
      maxConcurrentRequests: 20,
      attributeDefinitions: [LOGIN_DEFINITION],
      matching: MODELS[model],
    };
    const { results, log } = await execInChild(
      `${zipDir}/index.js`,
      [{ type: 'std:account:list', input: {}, config }],
      { cwd: zipDir },
    );
    const [list] = results;
    expect(list!.error).toBeUndefined();
    expect(log).toMatch(/"msg":"std:account:list finished"/);
    expect(log).not.toContain(sim.clientSecret);
    // More new accounts than one chunk: the probabilistic estimate spans several.
    expect(list!.outputs.length).toBeGreaterThan(2 * OWNER_CHUNK);
    expect(sim.tenant.formInstances.size).toBeGreaterThan(0);
    const stored = sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes[MODEL_PARAMETERS_KEY] as
      ModelParameters | undefined;
    if (model === 'probabilistic') {
      expect(stored).toMatchObject({
        version: 1,
        attributes: MODELS.probabilistic.attributes.map((a) => ({ attribute: a.attribute })),
      });
      expect(stored!.prior).toBeGreaterThan(0);
      expect(stored!.prior).toBeLessThan(1);
    } else {
      expect(stored).toBeUndefined();
    }
  });
});
