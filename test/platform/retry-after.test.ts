import { parseRetryAfter } from '../../src/platform/retry-after';
import { backoffDelay, rateLimitDelay, DEFAULT_RETRY_POLICY } from '../../src/platform/retry-policy';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delay-seconds, including fractions and arrays', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
    expect(parseRetryAfter(['2'], now)).toBe(2000);
    expect(parseRetryAfter(4, now)).toBe(4000);
  });

  it('reads an HTTP date relative to now, and a past date as 0', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:07 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });

  it('returns undefined for absent or unreadable values', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(-1, now)).toBeUndefined();
  });
});

describe('retry delays', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };

  it('grows exponentially with jitter between half and all of the step, capped', () => {
    expect(backoffDelay(policy, 1, () => 0)).toBe(50);
    expect(backoffDelay(policy, 1, () => 1)).toBe(100);
    expect(backoffDelay(policy, 3, () => 1)).toBe(400);
    expect(backoffDelay(policy, 10, () => 1)).toBe(1000);
    expect(backoffDelay(policy, 10, () => 0)).toBe(500);
  });

  it('honours Retry-After in full, and falls back to backoff without it', () => {
    expect(rateLimitDelay(policy, 1, 5000, () => 0)).toBe(5000);
    expect(rateLimitDelay(policy, 2, undefined, () => 1)).toBe(200);
  });
});
