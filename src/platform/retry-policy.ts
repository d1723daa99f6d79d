/** Why an attempt is retried; also the `reason` label of the retries metric. */
export type RetryReason = 'rate_limited' | 'server_error' | 'network' | 'unauthorized';

export interface RetryPolicy {
  /** Attempts in total (first try included). */
  maxAttempts: number;
  /** First backoff for 5xx and network errors; doubles per attempt. */
  baseDelayMs: number;
  /** Cap of one backoff for 5xx, network errors and a 429 without Retry-After. */
  maxDelayMs: number;
  /** Longest a single attempt may take before it is aborted. */
  attemptTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 8,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  attemptTimeoutMs: 60_000,
};

/**
 * Exponential backoff with "full jitter" (a uniform draw in [d/2, d]) so pods that failed
 * together do not retry together. `attempt` is 1 for the first retry.
 */
export function backoffDelay(
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  attempt: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/**
 * Delay before retrying after a 429: the server's Retry-After when given (honoured in full;
 * the caller gives up instead when it passes the deadline), otherwise the same backoff as a
 * 5xx. A little jitter spreads pods that were held together.
 */
export function rateLimitDelay(
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs === undefined) return backoffDelay(policy, attempt, random);
  return retryAfterMs + Math.round(random() * 50);
}

export function validateRetryPolicy(p: RetryPolicy): RetryPolicy {
  const ok =
    Number.isInteger(p.maxAttempts) &&
    p.maxAttempts >= 1 &&
    p.baseDelayMs >= 0 &&
    p.maxDelayMs >= p.baseDelayMs &&
    p.attemptTimeoutMs > 0;
  if (!ok) throw new RangeError(`invalid retry policy ${JSON.stringify(p)}`);
  return p;
}
