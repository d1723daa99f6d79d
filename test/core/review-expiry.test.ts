import { reviewExpiry } from '../../src/core/aggregation/duplicate-review';

describe('a review expires "Manual review expiration days" after it is submitted', () => {
  it('is the submission time plus the days, as ISO text, following the clock', () => {
    let now = new Date('2026-11-29T10:00:00.000Z');
    const expiresAt = reviewExpiry(7, () => now);
    expect(expiresAt()).toBe('2026-12-06T10:00:00.000Z');
    // Reviews submitted in the same millisecond share it; a later one gets its own.
    expect(expiresAt()).toBe('2026-12-06T10:00:00.000Z');
    now = new Date('2026-11-29T10:00:00.001Z');
    expect(expiresAt()).toBe('2026-12-06T10:00:00.001Z');
    now = new Date('2026-12-31T23:59:59.999Z');
    expect(expiresAt()).toBe('2027-01-07T23:59:59.999Z');
    // The clock going back (a corrected clock) is followed too.
    now = new Date('2026-11-29T10:00:00.000Z');
    expect(expiresAt()).toBe('2026-12-06T10:00:00.000Z');
  });
});
