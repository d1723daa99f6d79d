import axios, { type AxiosInstance } from 'axios';
import { AbortedError, linkSignal } from './abort';
import { ENDPOINT } from './endpoint-templates';
import { platformRequestDuration, platformRequests } from './metrics';
import { classifyFailure, type ClassifiedFailure, type RequestDescriptor } from './platform-errors';
import { TokenCache, type CachedToken, type SharedFetch } from './token-cache';

export interface TokenProviderOptions {
  baseurl: string;
  clientId: string;
  clientSecret: string;
  /** Longest one token request may take. */
  timeoutMs?: number;
  /** Axios instance for the token endpoint; a fresh one by default (never the global). */
  http?: AxiosInstance;
  now?: () => number;
  /**
   * Tokens shared with other providers (token-cache.ts) under `key`; this provider's own otherwise.
   * Providers sharing a key share their clock (`now`), timeout and HTTP client: a request one of them
   * sent serves them all. `fetchFirst`: get() ignores a cached token until an answer of the token
   * endpoint this provider waited for (a request it sent, or one under way it joined) succeeded: a test
   * connection proves the credentials, also when its first request failed. That token is shared then.
   */
  cache?: { store: TokenCache; key: string; fetchFirst?: boolean };
}

/** How long a token the endpoint gave no `expires_in` for is used before it is fetched again. */
const NO_LIFETIME_MS = 5 * 60_000;

export const TOKEN_REQUEST: RequestDescriptor = { method: 'POST', endpoint: ENDPOINT.token };

/**
 * A token fetch that failed, as a classified failure: the request executor decides about retries
 * and words the error, with the real number of attempts, like for any other platform request.
 */
export class TokenFetchError extends Error {
  constructor(
    readonly failure: ClassifiedFailure,
    readonly original?: unknown,
  ) {
    super(`token request failed (${failure.kind}${failure.status !== undefined ? `, HTTP ${failure.status}` : ''})`);
    this.name = 'TokenFetchError';
  }
}

/** Refresh this long before expiry: 10 % of the lifetime, at most one minute. */
function refreshMargin(expiresInSeconds: number): number {
  return Math.min(60_000, expiresInSeconds * 100);
}

/**
 * Client-credentials token for the platform API, cached and refreshed before `expires_in`.
 * Nothing happens in the constructor; the first `get()` fetches. Concurrent callers share one
 * fetch, also the callers of other providers of the same cache key. A failed fetch rejects only the
 * callers waiting for it (never an unhandled rejection) and is retried by the next `get()`. When
 * every caller waiting for the shared fetch has given up (cancelled, or its deadline passed), the
 * request is aborted: it never outlives the last caller.
 */
export class TokenProvider {
  private readonly cache: { store: TokenCache; key: string; fetchFirst?: boolean };
  private readonly http: AxiosInstance;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  /** Token requests this provider started (not those it joined); for tests and the benchmark. */
  fetches = 0;
  /** A token-endpoint answer this provider waited for succeeded (`fetchFirst` is then met). */
  private proved = false;

  constructor(private readonly opts: TokenProviderOptions) {
    this.http = opts.http ?? axios.create();
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.cache = opts.cache ?? { store: new TokenCache(), key: '' };
  }

  private get cached(): CachedToken | undefined {
    return this.cache.store.get(this.cache.key);
  }

  /** A valid access token. Rejects with a TokenFetchError, or an AbortError when `signal` aborts. */
  async get(signal?: AbortSignal): Promise<string> {
    const c = this.cached;
    if (c && this.now() < c.refreshAt && !(this.cache.fetchFirst && !this.proved)) return c.value;
    if (signal?.aborted) throw new AbortedError();
    const shared = this.cache.store.share(this.cache.key, (waiters) => this.fetch(waiters));
    const token = await this.wait(shared, signal);
    // A fresh answer of the token endpoint, whoever asked: the credentials are proved.
    this.proved = true;
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
        // Nobody waits: stop the request now.
        this.cache.store.abandon(this.cache.key, shared);
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
    this.cache.store.delete(this.cache.key, value);
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
      platformRequests.inc({ platform_endpoint: ENDPOINT.token, method: 'POST', status: String(res.status) });
      const data = (res.data ?? {}) as { access_token?: unknown; expires_in?: unknown };
      if (typeof data.access_token !== 'string' || data.access_token === '') {
        // A 200 without a token: a web server, a gateway page, not the platform's token endpoint.
        throw new TokenFetchError({ kind: 'not_platform', status: res.status });
      }
      const expiresIn = typeof data.expires_in === 'number' ? data.expires_in : Number(data.expires_in);
      // Without a lifetime, fetched again after NO_LIFETIME_MS: the token is shared by the process's commands.
      const refreshAt =
        Number.isFinite(expiresIn) && expiresIn > 0
          ? this.now() + expiresIn * 1000 - refreshMargin(expiresIn)
          : this.now() + NO_LIFETIME_MS;
      const token = { value: data.access_token, refreshAt };
      this.cache.store.set(this.cache.key, token);
      return token;
    } catch (e) {
      if (e instanceof TokenFetchError) throw e;
      const f = classifyFailure(e);
      // Every waiter gave up: nobody reads this outcome, and it is not a timeout.
      if (link.cause() === 'cancelled') {
        platformRequests.inc({ platform_endpoint: ENDPOINT.token, method: 'POST', status: 'aborted' });
        throw new AbortedError();
      }
      platformRequests.inc({
        platform_endpoint: ENDPOINT.token,
        method: 'POST',
        status: f.status ? String(f.status) : 'error',
      });
      if (f.kind === 'aborted') throw new TokenFetchError({ kind: 'network', networkCode: 'ETIMEDOUT' });
      // The token endpoint answers 400/401 invalid_client for a wrong id or secret; any other 4xx
      // (404, 405, ...) means the URL does not lead to the platform's token endpoint.
      if (f.kind === 'client_error' && (f.status === 400 || f.status === 401))
        throw new TokenFetchError({ ...f, kind: 'unauthorized' }, e);
      if (f.kind === 'client_error' || f.kind === 'not_found' || f.kind === 'forbidden')
        throw new TokenFetchError({ ...f, kind: 'not_platform' }, e);
      throw new TokenFetchError(f, e);
    } finally {
      platformRequestDuration.observe(
        { platform_endpoint: ENDPOINT.token, method: 'POST' },
        (performance.now() - started) / 1000,
      );
      link.dispose();
    }
  }
}
