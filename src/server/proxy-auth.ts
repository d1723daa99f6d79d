import { FusionError } from '../core/errors';
import { AuthThrottle } from './auth-throttle';
import { authFailures } from './metrics';
import { createPasswordCheck } from '../secrets/password-compare';

/** Proxy password check with per-address throttling of failures. */
export class ProxyAuth {
  private readonly check: (given: unknown) => boolean;
  private readonly throttle: AuthThrottle;

  constructor(password: string, opts: { maxFailures: number; windowMs: number }) {
    this.check = createPasswordCheck(password);
    this.throttle = new AuthThrottle(opts.maxFailures, opts.windowMs);
  }

  /** Throws PROXY_AUTH_THROTTLED (429) or PROXY_UNAUTHORIZED (401); never echoes what was sent. */
  verify(address: string, given: unknown): void {
    const retryAfterMs = this.throttle.retryAfterMs(address);
    if (retryAfterMs > 0) {
      authFailures.inc({ reason: 'throttled' });
      throw new FusionError(
        'PROXY_AUTH_THROTTLED',
        `too many failed proxy passwords from this address; retry in ${Math.ceil(retryAfterMs / 1000)} s`,
        {
          retryAfterMs,
        },
      );
    }
    if (this.check(given)) return;
    const missing = typeof given !== 'string' || given.length === 0;
    this.throttle.recordFailure(address);
    authFailures.inc({ reason: missing ? 'missing' : 'mismatch' });
    throw new FusionError(
      'PROXY_UNAUTHORIZED',
      missing
        ? 'config.proxyPassword is missing: set the Proxy password of the source to the PROXY_PASSWORD of the server'
        : 'config.proxyPassword does not match PROXY_PASSWORD of the server (compared exactly, case-sensitive)',
    );
  }
}
