/**
 * #27 item 4: a test connection and a single-account command are answered while every slot for long
 * commands runs an aggregation. Real `serve` processes at their default settings (WORKER_CONCURRENCY
 * and WORKER_QUICK_CONCURRENCY unset), embedded and queue mode; the simulator holds every read of one source
 * by id (an aggregation reads its own source's state that way; a test connection and an account read list
 * the sources instead), so the aggregations certainly occupy all long slots (and a fifth waits) while the
 * quick commands go.
 */
import { proxyItems, type ProxyItem } from '../../src/proxy-client';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { tenantConnection } from '../support/tenant-config';
import { Proc } from '../support/serve-process';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

/** How long the aggregations may take to be held (quiet machine; until() scales it). */
const HELD_MS = 120_000;

jest.setTimeout(scaled(240_000));

const PASSWORD = 'quick-lane-proxy-password-7c1e4a9b';
/** The server's default WORKER_CONCURRENCY (src/server/env.ts). */
const DEFAULT_LONG_SLOTS = 4;

async function collect(items: AsyncIterable<ProxyItem>): Promise<ProxyItem[]> {
  const out: ProxyItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe.each(['embedded', 'queue'] as const)('%s mode: quick commands never wait behind aggregations', (mode) => {
  let sim: RunningSimulator;
  let redis: OwnRedis | undefined;
  let server: Proc;

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 5,
      tenant: { identities: 60, accountsPerSource: 40, machineRate: 0 },
      rateLimit: false,
      logRequests: false,
    });
    const env: Record<string, string> = { PROXY_PASSWORD: PASSWORD };
    if (mode === 'queue') {
      redis = await startOwnRedis();
      Object.assign(env, { REDIS_URL: redis.url, JOB_ENCRYPTION_KEY: 'e'.repeat(64) });
    }
    server = new Proc(mode, 'all', await freePort(), env);
    await server.start();
  });
  afterAll(async () => {
    await server?.kill('SIGKILL').catch(() => undefined);
    await sim?.close();
    await redis?.stop();
  });

  const config = (): Record<string, unknown> => ({
    ...tenantConnection(sim),
    sources: ['Contractors', 'LDAP'],
    // Several aggregations of one source at once: the run lock would make them wait for each other.
    concurrencyCheckEnabled: false,
  });
  const call = (type: string, input: Record<string, unknown> = {}): Promise<ProxyItem[]> =>
    collect(proxyItems({ url: `${server.url}/`, password: PASSWORD, type: type as never, input, config: config() }));

  it('every long slot runs an aggregation and one more waits: test connection and account read are answered', async () => {
    const before = sim.control.counters().faultsInjected;
    sim.control.injectFault({
      method: 'GET',
      pathTemplate: '/v3/sources/{id}',
      hold: true,
      times: Number.POSITIVE_INFINITY,
    });
    const settled: boolean[] = [];
    const runs = Array.from({ length: DEFAULT_LONG_SLOTS + 1 }, (_, i) => {
      const run = call('std:account:list');
      void run.then(
        () => (settled[i] = true),
        () => (settled[i] = true),
      );
      return run;
    });
    // Every long slot holds an aggregation in the middle of its first platform page.
    await until(
      `${DEFAULT_LONG_SLOTS} aggregations held`,
      () => {
        return sim.control.counters().faultsInjected - before >= DEFAULT_LONG_SLOTS;
      },
      HELD_MS,
    );

    const test = await call('std:test-connection');
    expect(test).toHaveLength(1);
    expect(test[0]).toMatchObject({ status: 'success' });
    // A single-account command on an account that does not exist: answered (with its error), not queued
    // behind the aggregations.
    await expect(call('std:account:read', { identity: 'no-such-connector-account' })).rejects.toMatchObject({
      code: 'ACCOUNT_NOT_FOUND',
    });
    // The aggregations were still running (held) when both quick commands were answered.
    expect(settled.filter(Boolean)).toHaveLength(0);
    expect(sim.control.counters().faultsInjected - before).toBe(DEFAULT_LONG_SLOTS);

    sim.control.clearFaults();
    // The held pages go on; the fifth aggregation gets a slot once one frees.
    while (settled.filter(Boolean).length < runs.length) {
      sim.control.releaseHeld();
      await new Promise((r) => setTimeout(r, 50));
    }
    const results = await Promise.allSettled(runs);
    expect(results.map((r) => r.status)).toEqual(runs.map(() => 'fulfilled'));
  });
});
