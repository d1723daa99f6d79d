/**
 * #10 item 6: a run that fails because Redis went away (the shared rate limiter, the run lock)
 * must still take its processing flag down; before, the clean-up call went through the same
 * Redis-backed limiter, failed too, and the next run reported AGGREGATION_STALE_FLAG.
 */
import { Redis } from 'ioredis';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { runPlatformAggregation } from '../../src/simulator/platform-aggregation';
import type { CommandType } from '../../src/core/command-types';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { uniquePrefix } from '../support/redis';
import { context, type LogLine } from './support';
import { scaled } from '../support/time-factor';

let sim: RunningSimulator;
let own: OwnRedis;
let redis: Redis;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 11,
    tenant: { identities: 30, accountsPerSource: 20, machineRate: 0 },
    rateLimit: false,
    logRequests: false,
  });
  own = await startOwnRedis();
  // The options `fusion-proxy serve` gives the workers' shared connection.
  redis = new Redis(own.url, { maxRetriesPerRequest: 3, disconnectTimeout: 200 });
  redis.on('error', () => undefined);
});

afterAll(async () => {
  redis.disconnect();
  await own.stop();
  await sim.close();
});

function setup() {
  const fusionId = sim.tenant.meta.fusionSourceId!;
  const config = {
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    spConnectorInstanceId: sim.tenant.source(fusionId).connectorAttributes.spConnectorInstanceId,
    sources: ['Contractors', 'LDAP', 'Legacy'],
    requestsPerSecond: 1000,
    maxConcurrentRequests: 5,
    matching: { attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }] },
  };
  const lines: LogLine[] = [];
  const runner = createProductionRunner({ redis, keyPrefix: uniquePrefix('outage') + ':', taskPollMs: 100 });
  const invoke = (type: string, input: Record<string, unknown>) =>
    runner(type as CommandType, input, config, context(lines));
  return { lines, fusionId, aggregate: () => runPlatformAggregation({ tenant: sim.tenant, invoke }) };
}

it(
  'clears the processing flag of a run that fails in a Redis outage, and the next run succeeds',
  async () => {
    const { fusionId, aggregate, lines } = setup();
    // The run is well under way (flag set, lock held) when Redis dies: every accounts page is slow.
    sim.control.injectFault({ pathTemplate: '/v3/accounts', latencyMs: 400, times: Infinity });
    const running = aggregate().then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    const flagSet = async (): Promise<boolean> => {
      const flag = sim.tenant.source(fusionId).connectorAttributes.processing;
      return flag !== undefined && flag !== null;
    };
    for (let i = 0; i < 800 && !(await flagSet()); i++) await new Promise((r) => setTimeout(r, 25));
    expect(await flagSet()).toBe(true);
    await own.kill();
    const failure = await running;
    sim.control.clearFaults();
    expect(failure).toBeDefined();
    expect(['RATE_LIMITER_UNAVAILABLE', 'AGGREGATION_LOCK_LOST']).toContain(failure!.code);
    // Taken down although Redis is still down.
    expect(sim.tenant.source(fusionId).connectorAttributes.processing ?? null).toBeNull();
    expect(lines.some((l) => /processing flag/.test(l.msg))).toBe(true);

    await own.start();
    await expect(aggregate()).resolves.toBeDefined();
  },
  scaled(90_000),
);
