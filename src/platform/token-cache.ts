/**
 * Client-credentials tokens shared by every platform client of this process. A client lives one command, so
 * without this each command fetched a token of its own: among them every `std:account:enable` the platform
 * sends after an aggregation, one per new connector account, a third of those commands' platform calls.
 * Keyed by the client's key prefix, the tenant's URL, the client id and a digest of the secret: a rotated
 * secret gets a token of its own, and the secret itself is never a key. A 401 drops the token that was sent
 * (request-executor.ts) for every client at once.
 */
import { createHash } from 'node:crypto';

export interface CachedToken {
  value: string;
  /** Time (ms, the provider's clock) after which it is fetched again; without `expires_in`, NO_LIFETIME_MS on. */
  refreshAt: number;
}

/** One token request shared by every caller waiting for it, whichever provider (command) started it. */
export interface SharedFetch {
  promise: Promise<CachedToken>;
  /** Aborts the request once no caller waits for it any more. */
  controller: AbortController;
  /** Callers waiting; a caller without a signal never leaves. */
  waiters: number;
}

/** Tokens kept at most: one per tenant and client this process serves; the oldest goes first. */
const MAX_TOKENS = 1000;

export class TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  /**
   * Token requests under way, per key: commands that start together (a burst of enables, every command
   * running when the token nears its expiry) wait for one request instead of sending one each.
   */
  private readonly inFlight = new Map<string, SharedFetch>();

  get(key: string): CachedToken | undefined {
    return this.tokens.get(key);
  }

  set(key: string, token: CachedToken): void {
    this.tokens.delete(key);
    this.tokens.set(key, token);
    if (this.tokens.size > MAX_TOKENS) this.tokens.delete(this.tokens.keys().next().value!);
  }

  /**
   * The request under way for `key`, or one `start` sends now. It runs with the settings of the provider
   * that started it (timeout, HTTP client, clock): the providers of one key must share them, as the
   * clients of one runner do (create-platform-client.ts).
   */
  share(key: string, start: (signal: AbortSignal) => Promise<CachedToken>): SharedFetch {
    const running = this.inFlight.get(key);
    if (running) return running;
    const controller = new AbortController();
    const shared: SharedFetch = { promise: start(controller.signal), controller, waiters: 0 };
    shared.promise
      .finally(() => this.settle(key, shared))
      // Callers may all have given up; the outcome is still observed here.
      .catch(() => undefined);
    this.inFlight.set(key, shared);
    return shared;
  }

  /** Aborts a request no caller waits for any more; the next caller starts a fresh one. */
  abandon(key: string, shared: SharedFetch): void {
    this.settle(key, shared);
    shared.controller.abort();
  }

  private settle(key: string, shared: SharedFetch): void {
    if (this.inFlight.get(key) === shared) this.inFlight.delete(key);
  }

  /** Drops the token under `key` if it is still `value` (a newer one fetched meanwhile stays). */
  delete(key: string, value: string): void {
    if (this.tokens.get(key)?.value === value) this.tokens.delete(key);
  }
}

/** The process's cache, which createPlatformClient gives every client. */
export const processTokens = new TokenCache();

/** A cache key for one client's credentials; `prefix` separates what must not share (tests' own buckets). */
export function tokenKey(prefix: string, baseurl: string, clientId: string, clientSecret: string): string {
  const secret = createHash('sha256').update(clientSecret).digest('base64url');
  return JSON.stringify([prefix, baseurl, clientId, secret]);
}
