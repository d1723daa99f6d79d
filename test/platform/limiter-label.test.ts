import { createHash } from 'node:crypto';
import { MAX_LIMITER_LABELS, OTHER_LIMITER, limiterLabel } from '../../src/platform/metrics';

describe('limiterLabel: the limiter key as a metric label', () => {
  it('is the tenant host and 8 hex digits of a SHA-256 of the client id, never the id itself', () => {
    const label = limiterLabel('acme.api.identitynow.com', 'client-id-1234567890');
    expect(label).toBe(
      `acme.api.identitynow.com/${createHash('sha256').update('client-id-1234567890').digest('hex').slice(0, 8)}`,
    );
    expect(label).not.toContain('client-id');
    expect(limiterLabel('acme.api.identitynow.com', 'client-id-1234567890')).toBe(label);
  });

  it(`stays bounded: past ${MAX_LIMITER_LABELS} keys in one process, new keys share "${OTHER_LIMITER}"`, () => {
    const labels = new Set<string>();
    for (let i = 0; i < MAX_LIMITER_LABELS + 20; i++) labels.add(limiterLabel('t.example', `client-${i}`));
    // The first test's key counts too.
    expect(labels.size).toBe(MAX_LIMITER_LABELS);
    expect(labels).toContain(OTHER_LIMITER);
    // Keys seen before the bound keep their own label.
    expect(limiterLabel('t.example', 'client-0')).not.toBe(OTHER_LIMITER);
  });
});
