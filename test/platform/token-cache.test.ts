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

  /** A runner with a key prefix of its own (no other test's token is in its way) and the simulator's token count. */
  const fresh = (taskPollMs?: number) => {
    const runner = createProductionRunner({
      keyPrefix: `tokens-${Math.random()}`,
      ...(taskPollMs ? { taskPollMs } : {}),
    });
    const config = tenantConnection(sim);
    const issued = () => sim.control.counters().tokensIssued;
    const command = (type: string, input: Record<string, unknown> = {}) =>
      collect(runner(type as CommandType, input, config, context()));
    const read = () => command('std:account:read', { identity: 'nobody' }).catch(() => undefined);
    return { runner, config, issued, command, read };
  };

  it('providers that ask at once send one request, and a provider whose caller gave up leaves it to the others', async () => {
    const store = new TokenCache();
    const [a, b, c] = [provider(store), provider(store), provider(store)];
    const gaveUp = new AbortController();
    const first = a.get(gaveUp.signal);
    const others = [b.get(), c.get()];
    // Each get() starts or joins its fetch before its first await.
    expect(a.fetches + b.fetches + c.fetches).toBe(1);
    gaveUp.abort();
    await expect(first).rejects.toThrow();
    const [tb, tc] = await Promise.all(others);
    expect(tb).toBe(tc);
    expect(a.peek()).toBe(tb);
    expect(a.fetches + b.fetches + c.fetches).toBe(1);
  });

  it('commands that start together with no token cached fetch one', async () => {
    const { issued, read } = fresh();
    const before = issued();
    await Promise.all([read(), read(), read(), read(), read()]);
    expect(issued() - before).toBe(1);
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
    const { runner, config, issued, read } = fresh(50);
    const before = issued();
    const run = await runPlatformAggregation({
      tenant: sim.tenant,
      invoke: (type, input) => runner(type as CommandType, input, config, context()),
    });
    // Every new account was enabled, one command each, on the aggregation's token.
    expect(run.enabled).toBeGreaterThan(5);
    expect(issued() - before).toBe(1);
    sim.control.revokeTokens(sim.clientId);
    await read();
    await read();
    expect(issued() - before).toBe(2);
  });

  it('a test connection joins a token request under way: a fresh answer proves the credentials', async () => {
    const { issued, command, read } = fresh();
    const before = issued();
    await Promise.all([read(), command('std:test-connection'), read()]);
    expect(issued() - before).toBe(1);
  });

  it('a test connection proves the credentials with a token it fetches, never a cached one; the next commands share it', async () => {
    const { issued, command, read } = fresh();
    const testConnection = () => command('std:test-connection');
    const before = issued();
    await testConnection();
    await testConnection();
    expect(issued() - before).toBe(2);
    await read();
    expect(issued() - before).toBe(2);
  });

  it('a test connection whose first token request fails fetches again rather than use the cached token', async () => {
    const { issued, command, read } = fresh();
    await read();
    const before = issued();
    sim.control.injectFault({ pathTemplate: '/oauth/token', status: 503, times: 1 });
    await command('std:test-connection');
    expect(issued() - before).toBe(1);
  });
});
