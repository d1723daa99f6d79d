import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Exact, case-sensitive comparison in constant time: hashing first makes both sides the same
 * length, so neither the content nor the length of the expected secret leaks through timing.
 */
export function passwordMatches(given: unknown, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0) return false;
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
