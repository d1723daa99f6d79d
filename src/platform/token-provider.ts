import axios, { type AxiosInstance } from 'axios';
import { FusionError } from '../core/errors';
import { AbortedError, linkSignal } from './abort';
import { ENDPOINT } from './endpoint-templates';
import { platformRequestDuration, platformRequests } from './metrics';
import { classifyFailure, toFusionError, type RequestDescriptor } from './platform-errors';

export interface TokenProviderOptions {
  baseurl: string;
  clientId: string;
  clientSecret: string;
  /** Longest one token request may take. */
  timeoutMs?: number;
  /** Axios instance for the token endpoint; a fresh one by default (never the global). */
  http?: AxiosInstance;
  now?: () => number;
}

/** One token request shared by every caller waiting for it. */
interface SharedFetch {
  promise: Promise<CachedToken>;
  /** Aborts the request once no caller waits for it any more. */
  controller: AbortController;
  /** Callers waiting; a caller without a signal never leaves. */
  waiters: number;
}

interface CachedToken {
  value: string;
  /** Time (ms, `now()` clock) after which the token is fetched again; Infinity if it does not expire. */
  refreshAt: number;
}

const TOKEN_REQUEST: RequestDescriptor = { method: 'POST', endpoint: ENDPOINT.token };

/** Refresh this long before expiry: 10 % of the lifetime, at most one minute. */
function refreshMargin(expiresInSeconds: number): number {
  return Math.min(60_000, expiresInSeconds * 100);
}

/**
 * Client-credentials token for the platform API, cached and refreshed before `expires_in`.
 * Nothing happens in the constructor; the first `get()` fetches. Concurrent callers share one
 * fetch. A failed fetch rejects only the callers waiting for it (never an unhandled rejection)
 * and is retried by the next `get()`. When every caller waiting for the shared fetch has given up
 * (cancelled, or its deadline passed), the request is aborted: it never outlives the last caller.
 */
export class TokenProvider {
  private cached?: CachedToken;
  private inFlight?: SharedFetch;
  private readonly http: AxiosInstance;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  /** Number of token requests sent; for tests and the benchmark. */
  fetches = 0;

  constructor(private readonly opts: TokenProviderOptions) {
    this.http = opts.http ?? axios.create();
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** A valid access token. Rejects with a FusionError, or an AbortError when `signal` aborts. */
  async get(signal?: AbortSignal): Promise<string> {
    const c = this.cached;
    if (c && this.now() < c.refreshAt) return c.value;
    if (signal?.aborted) throw new AbortedError();
    let shared = this.inFlight;
    if (!shared) {
      const controller = new AbortController();
      const promise = this.fetch(controller.signal);
      const s: SharedFetch = { promise, controller, waiters: 0 };
      promise
        .finally(() => {
          if (this.inFlight === s) this.inFlight = undefined;
        })
        // Callers may all have given up; the outcome is still observed here.
        .catch(() => undefined);
      this.inFlight = shared = s;
    }
    const token = await this.wait(shared, signal);
    return token.value;
  }

  /** Waits for a shared fetch; the last waiter to give up aborts it. */
  private wait(shared: SharedFetch, signal?: AbortSignal): Promise<CachedToken> {
    shared.waiters++;
    if (!signal) return shared.promise;
    return new Promise<CachedToken>((resolve, reject) => {
      const onAbort = (): void => {
        reject(new AbortedError());
        if (--shared.waiters > 0) return;
        // Nobody waits: stop the request now, and let the next caller start a fresh one.
        if (this.inFlight === shared) this.inFlight = undefined;
        shared.controller.abort();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      shared.promise.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  /** Drops the cached token after the platform rejected it (revoked, expired early). */
  invalidate(value: string): void {
    if (this.cached?.value === value) this.cached = undefined;
  }

  /** The cached token, if any, without fetching. */
  peek(): string | undefined {
    return this.cached?.value;
  }

  private async fetch(waiters: AbortSignal): Promise<CachedToken> {
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.opts.clientId,
      client_secret: this.opts.clientSecret,
    });
    const link = linkSignal(waiters, this.timeoutMs);
    const started = performance.now();
    this.fetches++;
    try {
      const res = await this.http.post<unknown>(`${this.opts.baseurl}/oauth/token`, body.toString(), {
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        signal: link.signal,
        maxRedirects: 0,
      });
      platformRequests.inc({ endpoint: ENDPOINT.token, method: 'POST', status: String(res.status) });
      const data = (res.data ?? {}) as { access_token?: unknown; expires_in?: unknown };
      if (typeof data.access_token !== 'string' || data.access_token === '') {
        throw new FusionError(
          'PLATFORM_REQUEST_FAILED',
          `Platform token endpoint POST ${ENDPOINT.token} answered without an access_token; check the Platform API URL (baseurl).`,
          {
            ...TOKEN_REQUEST,
            status: res.status,
            retryable: false,
          },
        );
      }
      const expiresIn = typeof data.expires_in === 'number' ? data.expires_in : Number(data.expires_in);
      const refreshAt =
        Number.isFinite(expiresIn) && expiresIn > 0
          ? this.now() + expiresIn * 1000 - refreshMargin(expiresIn)
          : Infinity;
      const token = { value: data.access_token, refreshAt };
      this.cached = token;
      return token;
    } catch (e) {
      if (e instanceof FusionError) throw e;
      const f = classifyFailure(e);
      // Every waiter gave up: nobody reads this outcome, and it is not a timeout.
      if (link.cause() === 'cancelled') {
        platformRequests.inc({ endpoint: ENDPOINT.token, method: 'POST', status: 'aborted' });
        throw new AbortedError();
      }
      platformRequests.inc({ endpoint: ENDPOINT.token, method: 'POST', status: f.status ? String(f.status) : 'error' });
      if (f.kind === 'aborted') {
        throw new FusionError(
          'PLATFORM_TIMEOUT',
          `Platform token endpoint POST ${ENDPOINT.token} did not answer within ${Math.round(this.timeoutMs / 1000)} s.`,
          {
            ...TOKEN_REQUEST,
            retryable: true,
          },
        );
      }
      // The token endpoint answers 400/401 invalid_client for a wrong id or secret.
      const kind = f.kind === 'client_error' && (f.status === 400 || f.status === 401) ? 'unauthorized' : f.kind;
      const err = toFusionError(TOKEN_REQUEST, { ...f, kind }, { attempts: 1 }, e);
      const retryable = kind === 'server_error' || kind === 'network' || kind === 'rate_limited';
      throw new FusionError(err.code, err.message, { ...err.details, retryable, retryAfterMs: f.retryAfterMs });
    } finally {
      platformRequestDuration.observe(
        { endpoint: ENDPOINT.token, method: 'POST' },
        (performance.now() - started) / 1000,
      );
      link.dispose();
    }
  }
}
