import { silentLogger } from '../../src/core/ports/logger';
import { createPlatformClient, type PlatformClientFactoryDeps } from '../../src/platform/create-platform-client';
import type { PlatformClient } from '../../src/platform/platform-client';
import { readPlatformSettings } from '../../src/platform/platform-settings';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import type { SimulatorOptions } from '../../src/simulator';

export type { RunningSimulator };

export async function startSim(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  return startSimulator({ seed: 7, tenant: { identities: 20, accountsPerSource: 30 }, ...opts });
}

/**
 * One simulator for a describe block: started before its tests, closed after them, and with
 * faults and the request log cleared before each test. `bind` receives it.
 */
export function useSimulator(opts: SimulatorOptions, bind: (sim: RunningSimulator) => void): void {
  let sim: RunningSimulator | undefined;
  beforeAll(async () => {
    sim = await startSim(opts);
    bind(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });
  beforeEach(() => {
    sim?.control.clearFaults();
    sim?.control.resetLog();
  });
}

/** Fast retries for tests; real backoff shape, small numbers. */
export const FAST_POLICY = { baseDelayMs: 5, maxDelayMs: 50, maxAttempts: 4, attemptTimeoutMs: 10_000 };

export function clientFor(
  sim: RunningSimulator,
  config: Record<string, unknown> = {},
  deps: Partial<PlatformClientFactoryDeps> = {},
): PlatformClient {
  const settings = readPlatformSettings({
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    requestsPerSecond: 200,
    maxConcurrentRequests: 10,
    ...config,
  });
  // Each test its own in-memory bucket, unless it passes Redis.
  return createPlatformClient(settings, {
    logger: silentLogger,
    keyPrefix: `t${Math.random()}`,
    policy: FAST_POLICY,
    ...deps,
  });
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The most timestamps that fall in any half-open window [t, t + windowMs). */
export function maxInWindow(timestamps: number[], windowMs = 1000): number {
  const ts = [...timestamps].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < ts.length; hi++) {
    while (ts[hi] - ts[lo] >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

export async function caught(
  p: Promise<unknown>,
): Promise<Error & { code?: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}
