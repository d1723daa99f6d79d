/**
 * Tokens shared by the process's platform clients (token-cache.ts): a command no longer fetches a token of its
 * own. Through the production runner against the simulator, as the connector runs its commands.
 */
import type { CommandType } from '../../src/core/command-types';
import { TokenCache, tokenKey } from '../../src/platform/token-cache';
import { TokenProvider } from '../../src/platform/token-provider';
import { runPlatformAggregation } from '../../src/simulator/platform-aggregation';
import { createProductionRunner } from '../../src/runtime/production-runner';
import type { RunningSimulator } from '../../src/simulator';
import { collect, context } from '../core/support';
import { tenantConnection } from '../support/tenant-config';
import { useSimulator } from './support';

describe('one token for every command of a process', () => {
  let sim: RunningSimulator;
  useSimulator({ rateLimit: false, tenant: { identities: 10, accountsPerSource: 5 } }, (s) => (sim = s));

  const provider = (store: TokenCache, clientSecret = sim.clientSecret): TokenProvider =>
    new TokenProvider({
      baseurl: sim.baseurl,
      clientId: sim.clientId,
      clientSecret,
      cache: { store, key: tokenKey('', sim.baseurl, sim.clientId, clientSecret) },
    });

  it('providers sharing a cache fetch once; a token one of them drops is gone for all; another secret gets its own', async () => {
    const store = new TokenCache();
    const [a, b] = [provider(store), provider(store)];
    const token = await a.get();
    expect(await b.get()).toBe(token);
    expect(a.fetches + b.fetches).toBe(1);
    b.invalidate(token);
    expect(a.peek()).toBeUndefined();
    const next = await a.get();
    expect(a.fetches + b.fetches).toBe(2);
    // A stale token dropped late does not drop the newer one.
    b.invalidate(token);
    expect(b.peek()).toBe(next);
    // Another secret is another key: the simulator refuses it, nothing is shared with it.
    const other = provider(store, 'another-secret');
    await expect(other.get()).rejects.toThrow();
    expect(a.peek()).toBe(next);
  });

  it('the key never holds the secret', () => {
    const key = tokenKey('', 'https://acme.api.example.com', 'cid', 'top-secret-value');
    expect(key).not.toContain('top-secret-value');
    expect(key).not.toBe(tokenKey('', 'https://acme.api.example.com', 'cid', 'other-secret-value'));
  });

  it('an aggregation and the enables after it share one token; a token the platform revoked is fetched again, once', async () => {
    // A key prefix of its own: no other test's token is in this one's way.
    const runner = createProductionRunner({ keyPrefix: `tokens-${Math.random()}`, taskPollMs: 50 });
    const config = tenantConnection(sim);
    const issued = () => sim.control.counters().tokensIssued;
    const before = issued();
    const run = await runPlatformAggregation({
      tenant: sim.tenant,
      invoke: (type, input) => runner(type as CommandType, input, config, context()),
    });
    // Every new account was enabled, one command each, on the aggregation's token.
    expect(run.enabled).toBeGreaterThan(5);
    expect(issued() - before).toBe(1);
    sim.control.revokeTokens(sim.clientId);
    const read = () => collect(runner('std:account:read' as CommandType, { identity: 'nobody' }, config, context()));
    await read().catch(() => undefined);
    await read().catch(() => undefined);
    expect(issued() - before).toBe(2);
  });

  it('a test connection proves the credentials with a token of its own, which the next commands share', async () => {
    const runner = createProductionRunner({ keyPrefix: `tokens-${Math.random()}` });
    const config = tenantConnection(sim);
    const issued = () => sim.control.counters().tokensIssued;
    const testConnection = () => collect(runner('std:test-connection' as CommandType, {}, config, context()));
    const before = issued();
    await testConnection();
    await testConnection();
    expect(issued() - before).toBe(2);
    const read = () => collect(runner('std:account:read' as CommandType, { identity: 'nobody' }, config, context()));
    await read().catch(() => undefined);
    expect(issued() - before).toBe(2);
  });

  it('a test connection whose first token request fails fetches again rather than use the cached token', async () => {
    const runner = createProductionRunner({ keyPrefix: `tokens-${Math.random()}` });
    const config = tenantConnection(sim);
    const issued = () => sim.control.counters().tokensIssued;
    await collect(runner('std:account:read' as CommandType, { identity: 'nobody' }, config, context())).catch(
      () => undefined,
    );
    const before = issued();
    sim.control.injectFault({ pathTemplate: '/oauth/token', status: 503, times: 1 });
    await collect(runner('std:test-connection' as CommandType, {}, config, context()));
    expect(issued() - before).toBe(1);
  });
});
