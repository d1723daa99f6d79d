import http from 'node:http';
import axios from 'axios';
import { TokenProvider } from '../../src/platform/token-provider';
import { caught, useSimulator, type RunningSimulator } from './support';

/** Sockets of `agent` carrying a request right now. */
function busy(agent: http.Agent): number {
  let n = 0;
  for (const list of Object.values(agent.sockets)) n += list?.length ?? 0;
  return n;
}

async function settle(agent: http.Agent): Promise<number> {
  for (let i = 0; i < 50 && busy(agent) > 0; i++) await new Promise((r) => setTimeout(r, 10));
  return busy(agent);
}

describe('TokenProvider: a shared token fetch never outlives its callers', () => {
  let sim: RunningSimulator;
  let agent: http.Agent;
  useSimulator({ rateLimit: false }, (s) => (sim = s));
  beforeEach(() => {
    agent = new http.Agent({ keepAlive: true });
  });
  afterEach(() => {
    agent.destroy();
  });

  function provider(timeoutMs = 30_000): TokenProvider {
    return new TokenProvider({
      baseurl: sim.baseurl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      timeoutMs,
      http: axios.create({ httpAgent: agent }),
    });
  }

  it('keeps the fetch while one caller still waits, and aborts it when the last one gives up', async () => {
    sim.control.injectFault({ pathTemplate: '/oauth/token', latencyMs: 3000, times: 1 });
    const tokens = provider();
    const a = new AbortController();
    const b = new AbortController();
    const pa = caught(tokens.get(a.signal));
    const pb = caught(tokens.get(b.signal));
    await new Promise((r) => setTimeout(r, 50));
    expect(busy(agent)).toBe(1);
    a.abort();
    expect((await pa).name).toBe('AbortError');
    await new Promise((r) => setTimeout(r, 30));
    expect(busy(agent)).toBe(1); // b still waits for the same request
    expect(tokens.fetches).toBe(1);
    b.abort();
    expect((await pb).name).toBe('AbortError');
    expect(await settle(agent)).toBe(0);
    // The next caller starts a fresh request rather than joining the aborted one.
    expect(await tokens.get()).toEqual(expect.any(String));
    expect(tokens.fetches).toBe(2);
  });

  it('a caller deadline shorter than the token timeout ends the request at that deadline', async () => {
    sim.control.injectFault({ pathTemplate: '/oauth/token', latencyMs: 3000, times: 1 });
    const tokens = provider(30_000);
    const issued = sim.control.counters().tokensIssued;
    const err = await caught(tokens.get(AbortSignal.timeout(100)));
    expect(err.name).toBe('AbortError');
    expect(await settle(agent)).toBe(0);
    expect(tokens.peek()).toBeUndefined();
    // The simulator saw the client go away (499) and issued no token for it.
    for (let i = 0; i < 50 && sim.control.requestLog().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sim.control.requestLog().map((e) => e.status)).toEqual([499]);
    expect(sim.control.counters().tokensIssued).toBe(issued);
  });

  it('a caller without a signal keeps the shared fetch alive for everyone', async () => {
    sim.control.injectFault({ pathTemplate: '/oauth/token', latencyMs: 200, times: 1 });
    const tokens = provider();
    const ac = new AbortController();
    const gaveUp = caught(tokens.get(ac.signal));
    const patient = tokens.get();
    ac.abort();
    expect((await gaveUp).name).toBe('AbortError');
    expect(await patient).toEqual(expect.any(String));
    expect(tokens.fetches).toBe(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const tokens = provider();
    const ac = new AbortController();
    ac.abort();
    expect((await caught(tokens.get(ac.signal))).name).toBe('AbortError');
    expect(tokens.fetches).toBe(0);
    expect(sim.control.counters().requests).toBe(0);
  });
});
