/**
 * bench:quality's review-flood line (issue 26): the bench:scale-out tenant (seed 11, N identities, N
 * accounts on two managed sources, none fused yet) aggregated through the real path (the production
 * runner, the platform client over HTTP, the review forms on the platform's custom forms) with the
 * simulated tenant's rules and the default matching.maxReviewShare. Those rules send nearly every
 * account to review (97,958 of 100,000): the run must stop with REVIEW_FLOOD before its first form,
 * which the simulator's own request counters show (no form instance, no notification).
 */
import type { CommandType } from '../src/core/command-types';
import { isFusionError } from '../src/core/errors';
import { silentLogger } from '../src/core/ports/logger';
import { createPlatformFactory } from '../src/platform/create-platform-client';
import { createProductionRunner } from '../src/runtime/production-runner';
import { startSimulatorProcess } from './harness';
import { SIMULATOR_MATCHING, aggregationConfig, fusionInstanceId, simulatorConnection } from './simulated-aggregation';

export interface FloodResult {
  size: number;
  /** The run's error code, or 'none' when it ended without one. */
  code: string;
  message: string;
  /** Accounts the run emitted (to the platform) before it stopped. */
  emitted: number;
  /** Review forms the platform received (simulator counters: POST form-instances). */
  forms: number;
  /** Notification workflows the platform ran (POST workflows/{id}/test, how notifications are sent). */
  notifications: number;
  seconds: number;
}

export async function reviewFloodRun(size: number): Promise<FloodResult> {
  const sim = await startSimulatorProcess({
    tenant: {
      seed: 11,
      identities: size,
      accountsPerSource: Math.ceil(size / 2),
      duplicateRate: 0.1,
      machineRate: 0,
      disabledSource: false,
    },
    rateLimit: false,
    logRequests: false,
  });
  try {
    const { info } = sim;
    const base = simulatorConnection(info);
    const factory = createPlatformFactory();
    const config = aggregationConfig(base, await fusionInstanceId(factory, base, info), 'rules');
    // The guard at its default: the configuration an administrator starts from.
    config.matching = { model: 'rules', attributes: SIMULATOR_MATCHING };
    const runner = createProductionRunner({ platform: factory, matchingThreads: 1 });
    const ctx = {
      signal: new AbortController().signal,
      logger: silentLogger,
      jobId: 'bench',
      progress: () => undefined,
    };
    const before = await sim.counters();
    const t0 = performance.now();
    let emitted = 0;
    let code = 'none';
    let message = '';
    try {
      for await (const item of runner('std:account:list' as CommandType, {}, config, ctx)) {
        void item;
        emitted++;
      }
    } catch (e) {
      code = isFusionError(e) ? e.code : 'other';
      message = e instanceof Error ? e.message : String(e);
    }
    const seconds = (performance.now() - t0) / 1000;
    const after = await sim.counters();
    const calls = (pattern: RegExp): number =>
      Object.entries(after.byTemplate)
        .filter(([key]) => pattern.test(key))
        .reduce((sum, [key, n]) => sum + n - (before.byTemplate[key] ?? 0), 0);
    const forms = calls(/^POST \S*\/form-instances$/);
    const notifications = calls(/^POST \S*\/workflows\/\{id\}\/test$/);
    return { size, code, message, emitted, forms, notifications, seconds };
  } finally {
    await sim.stop();
  }
}
