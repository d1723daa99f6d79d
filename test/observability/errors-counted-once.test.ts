/**
 * #28 item 13: one failed command is one error in fusion_errors_total. The api used to count the
 * failure it relayed (component "api") on top of the worker's or the embedded runner's own count,
 * so the dashboard's errors panel showed every failure twice.
 */
import { registry } from '../../src/observability/metrics-registry';
import { METRIC } from '../../src/observability/metric-names';
import { commandBody, post, startHarness, type Harness, type Mode } from '../server/harness';

async function errors(component: string, code: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === METRIC.errors);
  const v = metric?.values.find((x) => x.labels.component === component && x.labels.code === code);
  return v?.value ?? 0;
}

describe.each<[Mode, string]>([
  ['embedded', 'embedded'],
  ['queue', 'worker'],
])('%s mode', (mode, runs) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h.close();
  });

  it(`a command that fails before its first byte counts once (component ${runs}), not again as "api"`, async () => {
    // The scripted runner throws a plain Error: a failure without a code of its own, counted as UNEXPECTED where it
    // ran; the client is told PROXY_SERVER_ERROR.
    const total = async (component: string): Promise<number> =>
      (await errors(component, 'UNEXPECTED')) + (await errors(component, 'PROXY_SERVER_ERROR'));
    const before = { api: await total('api'), runs: await total(runs) };
    const res = await post(`${h.base}/proxy`, commandBody({ failBeforeFirst: 'the source went away' }));
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'PROXY_SERVER_ERROR' });
    expect(await total(runs)).toBe(before.runs + 1);
    expect(await total('api')).toBe(before.api);
  });
});
