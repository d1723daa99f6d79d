import type { Redis } from 'ioredis';
import type { Logger } from '../core/ports/logger';
import type { PlatformFactory } from '../core/ports/platform';
import { ConcurrencyGate } from './concurrency-gate';
import { sharedMemoryBucket } from './memory-token-bucket';
import { limiterLabel, rateLimitConfiguredRps } from './metrics';
import { PlatformClient } from './platform-client';
import { readPlatformSettings, type PlatformSettings } from './platform-settings';
import { FallbackLimiter } from './fallback-limiter';
import { HoldOnlyLimiter, type RateLimiter } from './rate-limiter';
import { RedisTokenBucket } from './redis-token-bucket';
import type { RetryPolicy } from './retry-policy';
import { processTokens, tokenKey } from './token-cache';
import { tenantOf } from '../core/config/tenant';

export interface PlatformClientFactoryDeps {
  /** Queue mode: the bucket is shared through Redis by every api and worker pod. */
  redis?: Redis;
  logger: Logger;
  /** The command's signal: aborting it stops every call of the client. */
  signal?: AbortSignal;
  /** Key prefix of the rate buckets (in Redis or memory) and of the process's token cache (tests use their own). */
  keyPrefix?: string;
  /** Window of the limiter in ms (>= 1000); see DEFAULT_WINDOW_MS. */
  windowMs?: number;
  policy?: Partial<RetryPolicy>;
  onDispatch?: (endpoint: string) => void;
  /** `cleanup`: a shared bucket that cannot be reached gives way to this process's own (see PlatformFactory). */
  purpose?: 'command' | 'cleanup' | 'check';
  /** Identities per search page (tests); IDENTITY_PAGE otherwise. */
  identityPage?: number;
}

/**
 * The platform client for one command. With "Enable queue" on, requests are throttled to
 * "Requests per second" (bucket in Redis when there is one, else in this process) with at most
 * "Maximum concurrent requests" in flight; with it off, only 429 holds are honoured.
 */
export function createPlatformClient(settings: PlatformSettings, deps: PlatformClientFactoryDeps): PlatformClient {
  const tenant = tenantOf(settings.baseurl);
  const label = limiterLabel(tenant, settings.clientId);
  let limiter: RateLimiter;
  let gate: ConcurrencyGate | undefined;
  if (settings.enableQueue) {
    rateLimitConfiguredRps.set({ limiter: label }, settings.requestsPerSecond);
    const limits = { requestsPerSecond: settings.requestsPerSecond, windowMs: deps.windowMs };
    const local = (): RateLimiter =>
      sharedMemoryBucket(`${deps.keyPrefix ?? ''}${tenant}\u0000${settings.clientId}`, limits);
    if (deps.redis) {
      const shared = new RedisTokenBucket({
        redis: deps.redis,
        tenant,
        clientId: settings.clientId,
        keyPrefix: deps.keyPrefix,
        ...limits,
      });
      const redis = deps.redis;
      limiter =
        deps.purpose === 'cleanup'
          ? new FallbackLimiter(shared, local(), deps.logger, () => redis.status === 'ready')
          : shared;
    } else {
      limiter = local();
    }
    gate = new ConcurrencyGate(settings.maxConcurrentRequests);
  } else {
    // No configured rate any more: a stale figure would read as a limit that is not applied.
    rateLimitConfiguredRps.remove({ limiter: label });
    limiter = new HoldOnlyLimiter();
  }
  return new PlatformClient(settings, {
    limiter,
    limiterLabel: label,
    gate,
    logger: deps.logger,
    signal: deps.signal,
    policy: deps.policy,
    onDispatch: deps.onDispatch,
    ...(deps.identityPage ? { identityPage: deps.identityPage } : {}),
    tokenCache: {
      store: processTokens,
      key: tokenKey(deps.keyPrefix ?? '', settings.baseurl, settings.clientId, settings.clientSecret),
      fetchFirst: deps.purpose === 'check',
    },
  });
}

/** The PlatformFactory the core commands receive: one client per command, sharing `redis`. */
export function createPlatformFactory(
  deps: Pick<PlatformClientFactoryDeps, 'redis' | 'keyPrefix' | 'windowMs' | 'policy'> = {},
): PlatformFactory {
  return (config, ctx) =>
    createPlatformClient(readPlatformSettings(config), {
      ...deps,
      logger: ctx.logger,
      signal: ctx.signal,
      purpose: ctx.purpose,
    });
}
