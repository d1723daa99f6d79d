import type { AxiosResponse } from 'axios';
import { type FusionError, isFusionError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { linkSignal, sleep } from './abort';
import type { ConcurrencyGate } from './concurrency-gate';
import {
  OTHER_LIMITER,
  concurrencyWait,
  platform429,
  platformRequestDuration,
  platformRequests,
  platformRetries,
  rateLimitRequests,
  rateLimitThrottled,
  rateLimiterWait,
} from './metrics';
import {
  cancelledError,
  classifyFailure,
  timeoutError,
  toFusionError,
  type ClassifiedFailure,
  type RequestDescriptor,
} from './platform-errors';
import type { RateLimiter } from './rate-limiter';
import { backoffDelay, rateLimitDelay, type RetryPolicy, type RetryReason } from './retry-policy';
import { TOKEN_REQUEST, TokenFetchError, type TokenProvider } from './token-provider';

export interface PlatformRequest extends RequestDescriptor {
  /** Safe to send twice (reads, replacing patches). Others are retried only when not sent or on 429. */
  idempotent: boolean;
}

/** What one attempt gets: a signal that aborts at the attempt's or the call's deadline. */
export interface AttemptOptions {
  signal: AbortSignal;
  /**
   * The token this attempt is to send: the one a 401 then invalidates. Other commands share the token
   * cache (token-cache.ts), so one read again later could be another.
   */
  token: string;
  /**
   * To be awaited right before the request is dispatched (an axios request interceptor). If the
   * rate grant has gone stale meanwhile (the event loop was blocked, e.g. by GC or JSON parsing),
   * it takes a fresh one: a request sent long after its grant would arrive bunched with later
   * ones and break the limit as the platform measures it.
   */
  beforeSend: () => Promise<void>;
}

/**
 * A grant older than this when the request is dispatched is replaced by a fresh one (the stale
 * one is handed back). Measured from when the grant was asked for (see Grant.at), it must stay
 * below the margin of the limiter window over 1 s (DEFAULT_WINDOW_MS: 15 ms), so that dispatch
 * times, not only grants, keep within the limit. Not much lower: on a loaded event loop with many
 * requests in flight, most grants would go stale and every request would queue for new ones.
 */
const STALE_GRANT_MS = 12;
const MAX_REGRANTS = 3;

/**
 * Attempts for a connection failure while nothing at the URL has answered this session: one
 * retry covers a blip; a wrong or unreachable Platform API URL then fails in about a second,
 * with its cause, instead of after a minute of backoff (and after the proxy's first heartbeat).
 */
const FIRST_CONTACT_ATTEMPTS = 2;

export interface ExecutorDeps {
  tokens: TokenProvider;
  limiter: RateLimiter;
  /** The `limiter` label of the metrics (tenant host and a hash of the client id). */
  limiterLabel?: string;
  gate?: ConcurrencyGate;
  policy: RetryPolicy;
  /** Deadline of one call including every retry and wait. */
  callTimeoutMs: number;
  requestsPerSecond?: number;
  /** The Platform API URL, named in errors about reaching it. */
  baseurl?: string;
  logger: Logger;
  /** Aborts every call of this client (the command's signal). */
  signal?: AbortSignal;
  random?: () => number;
}

interface Decision {
  retry: boolean;
  reason?: RetryReason;
  delayMs?: number;
}

/**
 * Runs one platform call: token, concurrency slot, rate-limit grant, the attempt, then the retry
 * decision. This is the only retry layer (the library's own is switched off). Every wait and
 * every attempt observes the caller's signal and the call deadline, so nothing runs past them.
 */
export class RequestExecutor {
  /** Something at the URL answered (any HTTP status) during this session. */
  private answered = false;

  constructor(private readonly deps: ExecutorDeps) {}

  async run<T>(
    req: PlatformRequest,
    attempt: (o: AttemptOptions) => Promise<AxiosResponse<T>>,
    callerSignals: (AbortSignal | undefined)[] = [],
  ): Promise<AxiosResponse<T>> {
    const { policy, tokens, limiter, gate, logger } = this.deps;
    const limiterKey = { limiter: this.deps.limiterLabel ?? OTHER_LIMITER };
    const call = linkSignal([this.deps.signal, ...callerSignals], this.deps.callTimeoutMs);
    let attempts = 0;
    let refreshedAfter401 = false;
    const deadline = performance.now() + this.deps.callTimeoutMs;
    const stopped = (): FusionError =>
      call.cause() === 'deadline'
        ? timeoutError(req, this.deps.callTimeoutMs, attempts)
        : cancelledError(req, call.signal.reason, attempts);
    try {
      for (;;) {
        let failure: ClassifiedFailure;
        let original: unknown;
        let usedToken: string | undefined;
        let failedReq: PlatformRequest = req;
        try {
          // Token first, so a token fetch never sits between a rate grant and the request.
          usedToken = await tokens.get(call.signal);
          // A token means the platform's token endpoint answered: the URL is right.
          this.answered = true;
          // The two waits are told apart: a slow limiter means the RPS budget (shared by every pod of the
          // tenant), a slow gate means this command's own "Maximum concurrent requests".
          const gateStarted = performance.now();
          const release = gate ? await gate.acquire(call.signal) : undefined;
          try {
            const limiterStarted = performance.now();
            if (gate) concurrencyWait.observe(limiterKey, (limiterStarted - gateStarted) / 1000);
            let grant = await limiter.acquire(call.signal);
            rateLimiterWait.observe(limiterKey, (performance.now() - limiterStarted) / 1000);
            attempts++;
            const one = linkSignal(call.signal, policy.attemptTimeoutMs);
            let regrants = 0;
            const beforeSend = async (): Promise<void> => {
              while (performance.now() - grant.at > STALE_GRANT_MS && regrants < MAX_REGRANTS) {
                regrants++;
                grant = await limiter.acquire(one.signal, grant);
              }
            };
            const started = performance.now();
            rateLimitRequests.inc(limiterKey);
            try {
              const res = await attempt({ signal: one.signal, beforeSend, token: usedToken });
              this.answered = true;
              platformRequests.inc({ platform_endpoint: req.endpoint, method: req.method, status: String(res.status) });
              return res;
            } catch (e) {
              // Redis (limiter) trouble inside beforeSend, or the library's own token fetch failing:
              // handled below like the executor's own.
              if (isFusionError(e) || e instanceof TokenFetchError) throw e;
              // An attempt that hit its own timeout (not the call's) is a network failure to retry.
              if (one.cause() === 'deadline' && !call.signal.aborted) {
                failure = { kind: 'network', networkCode: 'ETIMEDOUT' };
              } else failure = classifyFailure(e);
              if (failure.status !== undefined) this.answered = true;
              original = e;
              platformRequests.inc({
                platform_endpoint: req.endpoint,
                method: req.method,
                status: failure.status ? String(failure.status) : failure.kind === 'aborted' ? 'aborted' : 'error',
              });
            } finally {
              platformRequestDuration.observe(
                { platform_endpoint: req.endpoint, method: req.method },
                (performance.now() - started) / 1000,
              );
              one.dispose();
            }
          } finally {
            release?.();
          }
        } catch (e) {
          if (call.signal.aborted) throw stopped();
          if (!(e instanceof TokenFetchError)) throw e;
          // The token endpoint failed: decided and worded like any request, with this call's attempts.
          attempts++;
          failure = e.failure;
          original = e.original;
          // Asking for a token again is safe.
          failedReq = { ...TOKEN_REQUEST, idempotent: true };
          if (failure.status !== undefined) this.answered = true;
        }

        if (failure.kind === 'aborted' || call.signal.aborted) throw stopped();
        if (failure.kind === 'rate_limited') {
          platform429.inc({ platform_endpoint: failedReq.endpoint });
          rateLimitThrottled.inc(limiterKey);
          // Every pod sharing the bucket pauses, not only this request.
          if (failure.retryAfterMs !== undefined && failure.retryAfterMs > 0)
            await limiter.holdFor(failure.retryAfterMs).catch(() => undefined);
        }
        const d = this.decide(failedReq, failure, attempts, refreshedAfter401, usedToken !== undefined);
        if (!d.retry) throw this.error(failedReq, failure, attempts, original);
        if (failure.kind === 'unauthorized' && usedToken !== undefined) {
          tokens.invalidate(usedToken);
          refreshedAfter401 = true;
        }
        const delay = d.delayMs ?? 0;
        if (performance.now() + delay >= deadline) {
          // Waiting would pass the deadline: fail now with the real cause, not a timeout later.
          if (failure.kind === 'rate_limited' || failure.kind === 'server_error' || failure.kind === 'network') {
            throw this.error(failedReq, failure, attempts, original);
          }
        }
        platformRetries.inc({ platform_endpoint: failedReq.endpoint, reason: d.reason ?? 'network' });
        logger.debug(
          {
            endpoint: failedReq.endpoint,
            method: failedReq.method,
            status: failure.status,
            attempt: attempts,
            delayMs: delay,
            reason: d.reason,
          },
          'platform request retried',
        );
        await this.pause(delay, call.signal, stopped);
      }
    } finally {
      call.dispose();
    }
  }

  private error(req: RequestDescriptor, failure: ClassifiedFailure, attempts: number, original: unknown): FusionError {
    return toFusionError(
      req,
      failure,
      {
        attempts,
        requestsPerSecond: this.deps.requestsPerSecond,
        baseurl: this.deps.baseurl,
        neverAnswered: !this.answered,
      },
      original,
    );
  }

  private async pause(ms: number, signal: AbortSignal, stopped: () => FusionError): Promise<void> {
    if (ms <= 0) return;
    try {
      await sleep(ms, signal);
    } catch {
      throw stopped();
    }
  }

  private decide(
    req: PlatformRequest,
    f: ClassifiedFailure,
    attempts: number,
    refreshedAfter401: boolean,
    hadToken: boolean,
  ): Decision {
    const { policy } = this.deps;
    const left = attempts < policy.maxAttempts;
    switch (f.kind) {
      case 'unauthorized':
        // A cached token may have been revoked or expired early: one fresh token, then give up.
        return { retry: left && hadToken && !refreshedAfter401, reason: 'unauthorized', delayMs: 0 };
      case 'rate_limited':
        return {
          retry: left,
          reason: 'rate_limited',
          delayMs: rateLimitDelay(policy, attempts, f.retryAfterMs, this.deps.random),
        };
      case 'server_error':
        return {
          retry: left && req.idempotent,
          reason: 'server_error',
          delayMs: backoffDelay(policy, attempts, this.deps.random),
        };
      case 'network':
        return {
          retry:
            left &&
            !f.permanent &&
            (this.answered || attempts < FIRST_CONTACT_ATTEMPTS) &&
            (req.idempotent || f.notSent === true),
          reason: 'network',
          delayMs: backoffDelay(policy, attempts, this.deps.random),
        };
      default:
        return { retry: false };
    }
  }
}
