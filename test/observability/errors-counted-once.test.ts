/**
 * #28 item 13: one failed command is one error in fusion_errors_total. The api used to count the
 * failure it relayed (component "api") on top of the worker's or the embedded runner's own count,
 * so the dashboard's errors panel showed every failure twice. And a command its client stopped (it
 * left) is no failure at all: the api logged it as "request failed" at error level and counted it.
 */
import net from 'node:net';
import { registry } from '../../src/observability/metrics-registry';
import { METRIC } from '../../src/observability/metric-names';
import { commandBody, post, startHarness, type Harness, type Mode } from '../server/harness';
import { until } from '../support/until';

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

describe.each<Mode>(['embedded', 'queue'])('%s mode: a client that leaves before the first byte', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h.close();
  });

  it('cancels its command: no error counted anywhere, no line at error level', async () => {
    const components = ['api', 'embedded', 'worker'];
    const count = async (): Promise<number[]> =>
      Promise.all(
        components.map(async (c) => (await errors(c, 'COMMAND_CANCELLED')) + (await errors(c, 'UNEXPECTED'))),
      );
    const before = await count();
    const executions = h.runner.executions.length;
    const body = JSON.stringify(commandBody({ hangAfterItems: 0 }));
    const socket = net.connect(Number(new URL(h.base).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST /proxy HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await until('the command started', () => h.runner.executions.length > executions);
    const execution = h.runner.executions[executions]!;
    const logged = h.logs.length;
    socket.destroy();
    await until('the command cancelled', () => execution.cancelled);
    // The api's own word on the request comes once the command has ended.
    await until('the api said the request was cancelled', () =>
      h.logs.slice(logged).some((l) => l.includes('"msg":"request cancelled"')),
    );
    const levels = h.logs.slice(logged).map((l) => (JSON.parse(l) as { level: string }).level);
    expect(levels).toContain('info');
    expect(levels.filter((l) => l === 'error' || l === 'fatal')).toEqual([]);
    expect(await count()).toEqual(before);
  });
});
