/**
 * The own source's id remembered by the runner (own-source-cache.ts): a single-account command, the enable the
 * platform sends for each new account above all, is one platform call instead of a source listing and a
 * lookup. Through the production runner against the simulator, counted by the simulator.
 */
import type { CommandType } from '../../src/core/command-types';
import { parseFusionConfig } from '../../src/core/config/fusion-config';
import { OWN_SOURCE_TTL_MS, OwnSourceCache } from '../../src/core/aggregation/own-source-cache';
import { runPlatformAggregation } from '../../src/simulator/platform-aggregation';
import { createProductionRunner } from '../../src/runtime/production-runner';
import type { RunningSimulator } from '../../src/simulator';
import { collect, context } from '../core/support';
import { tenantConnection } from '../support/tenant-config';
import { useSimulator } from './support';

describe('single-account commands and the remembered own source', () => {
  let sim: RunningSimulator;
  useSimulator({ rateLimit: false, tenant: { identities: 10, accountsPerSource: 5 } }, (s) => (sim = s));

  /** The calls `run` makes, by endpoint template. */
  const callsOf = async (run: () => Promise<unknown>): Promise<Record<string, number>> => {
    const before = { ...sim.control.counters().byTemplate };
    await run().catch(() => undefined);
    const delta: Record<string, number> = {};
    for (const [k, n] of Object.entries(sim.control.counters().byTemplate))
      if (n !== (before[k] ?? 0)) delta[k] = n - (before[k] ?? 0);
    return delta;
  };

  const setUp = async (ownSources = new OwnSourceCache()) => {
    const runner = createProductionRunner({ keyPrefix: `own-${Math.random()}`, ownSources });
    const config = tenantConnection(sim);
    const stream = (type: string, input: Record<string, unknown>) =>
      runner(type as CommandType, input, config, context());
    const command = (type: string, input: Record<string, unknown>) => collect(stream(type, input));
    // A test connection neither reads nor fills the cache; it fetches the token no count below should hold.
    await command('std:test-connection', {});
    return { stream, command, config };
  };

  /** A connector account on the fusion source, made by an aggregation of another runner if there is none. */
  const someAccount = async (): Promise<string> => {
    const own = () => [...sim.tenant.accountsOfSource(sim.tenant.meta.fusionSourceId as string).values()];
    if (own().length === 0) {
      const { stream } = await setUp();
      await runPlatformAggregation({ tenant: sim.tenant, enableNew: false, invoke: stream });
    }
    return own()[0]?.nativeIdentity as string;
  };

  it('the enables after an aggregation are one call each: no source listing', async () => {
    const { stream, command } = await setUp();
    const perEnable: Record<string, number>[] = [];
    const run = await runPlatformAggregation({
      tenant: sim.tenant,
      enableConcurrency: 1,
      invoke: (type, input) =>
        type === 'std:account:enable'
          ? (async function* () {
              let items: Record<string, unknown>[] = [];
              perEnable.push(await callsOf(async () => (items = await command(type, input))));
              yield* items;
            })()
          : stream(type, input),
    });
    expect(run.enabled).toBeGreaterThan(5);
    expect(run.enableErrors).toEqual([]);
    expect(perEnable).toHaveLength(run.enabled);
    for (const calls of perEnable) expect(calls).toEqual({ 'GET /v3/accounts': 1 });
  });

  it('a first command lists the sources; the next ones do not', async () => {
    const identity = await someAccount();
    const { command } = await setUp();
    const read = () => command('std:account:read', { identity });
    expect(await callsOf(read)).toEqual({ 'GET /v3/sources': 1, 'GET /v3/accounts': 1 });
    expect(await callsOf(read)).toEqual({ 'GET /v3/accounts': 1 });
    expect(await read()).toEqual([expect.objectContaining({ identity })]);
  });

  it('a replaced source: the account is not under the remembered id, so the sources are listed and it is found', async () => {
    const identity = await someAccount();
    const ownSources = new OwnSourceCache();
    const { command, config } = await setUp(ownSources);
    ownSources.remember(parseFusionConfig(config), { id: 'a-source-since-replaced', name: 'Fusion (old)' });
    const enable = () => command('std:account:enable', { identity });
    expect(await callsOf(enable)).toEqual({ 'GET /v3/accounts': 2, 'GET /v3/sources': 1 });
    expect(await enable()).toEqual([expect.objectContaining({ identity, disabled: false })]);
    expect(await callsOf(enable)).toEqual({ 'GET /v3/accounts': 1 });
  });

  it('an account that does not exist: ACCOUNT_NOT_FOUND after one listing, no second lookup; the id stays', async () => {
    const identity = await someAccount();
    const { command } = await setUp();
    await command('std:account:read', { identity });
    const missing = command('std:account:read', { identity: 'nobody' });
    await expect(missing).rejects.toMatchObject({ code: 'ACCOUNT_NOT_FOUND' });
    expect(await callsOf(() => command('std:account:read', { identity: 'nobody' }))).toEqual({
      'GET /v3/accounts': 1,
      'GET /v3/sources': 1,
    });
    expect(await callsOf(() => command('std:account:read', { identity }))).toEqual({ 'GET /v3/accounts': 1 });
  });

  it('an id older than its lifetime is listed again', async () => {
    const identity = await someAccount();
    let now = 0;
    const { command } = await setUp(new OwnSourceCache(undefined, () => now));
    const read = () => command('std:account:read', { identity });
    await read();
    now = OWN_SOURCE_TTL_MS - 1;
    expect(await callsOf(read)).toEqual({ 'GET /v3/accounts': 1 });
    now = OWN_SOURCE_TTL_MS;
    expect(await callsOf(read)).toEqual({ 'GET /v3/sources': 1, 'GET /v3/accounts': 1 });
  });
});
