import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The one password comparison (the proxy password, in the server and in the connector): exact,
 * case-sensitive, in constant time. Both sides are hashed first, so neither the length nor a common
 * prefix of the expected password shows in the timing; an empty or non-string answer never matches.
 */
export function createPasswordCheck(expected: string): (given: unknown) => boolean {
  const expectedHash = createHash('sha256').update(expected, 'utf8').digest();
  return (given) => {
    if (typeof given !== 'string' || given.length === 0) return false;
    return timingSafeEqual(createHash('sha256').update(given, 'utf8').digest(), expectedHash);
  };
}

export function passwordMatches(given: unknown, expected: string): boolean {
  return createPasswordCheck(expected)(given);
}
