import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares a presented password with the expected one in constant time: both are hashed
 * first so neither the length nor a common prefix shows in the timing.
 */
export function createPasswordCheck(expected: string): (given: unknown) => boolean {
  const expectedHash = createHash('sha256').update(expected, 'utf8').digest();
  return (given) => {
    if (typeof given !== 'string' || given.length === 0) return false;
    return timingSafeEqual(createHash('sha256').update(given, 'utf8').digest(), expectedHash);
  };
}
