/**
 * The rule a worker uses before it stops a job because its api's reader lease is missing: one
 * missing lease is not proof (a Redis stall may have let it expire while the api lived); a second
 * check, sent a full renewal period after a prompt answer, must still find it missing.
 */
import { LAPSE_CONFIRM_MS, LeaseLapse, READER_RENEW_MS } from '../../src/queue/lease-lapse';

describe('LeaseLapse', () => {
  it('a lease seen missing once is not a lapse; missing again a renewal period later (prompt answers) is', () => {
    const l = new LeaseLapse();
    expect(l.observe(false, 0, 5)).toBe(false);
    expect(l.observe(false, 250, 255)).toBe(false);
    expect(l.observe(false, READER_RENEW_MS, READER_RENEW_MS + 5)).toBe(false);
    expect(l.observe(false, LAPSE_CONFIRM_MS + 5, LAPSE_CONFIRM_MS + 10)).toBe(true);
  });

  it('the lease back in between (the api renewed it) starts over', () => {
    const l = new LeaseLapse();
    expect(l.observe(false, 0, 5)).toBe(false);
    expect(l.observe(true, 1000, 1005)).toBe(false);
    expect(l.observe(false, LAPSE_CONFIRM_MS + 5, LAPSE_CONFIRM_MS + 10)).toBe(false);
    expect(l.observe(false, 2 * LAPSE_CONFIRM_MS + 20, 2 * LAPSE_CONFIRM_MS + 25)).toBe(true);
  });

  it('a check that Redis answered only after a stall never confirms: its answer may predate the renewal', () => {
    const l = new LeaseLapse();
    expect(l.observe(false, 0, 5)).toBe(false);
    // Sent late enough, but answered 20 s later (Redis paused): starts the wait again from its answer.
    expect(l.observe(false, LAPSE_CONFIRM_MS + 5, LAPSE_CONFIRM_MS + 20_005)).toBe(false);
    expect(l.observe(false, LAPSE_CONFIRM_MS + 20_010, LAPSE_CONFIRM_MS + 20_015)).toBe(false);
    expect(l.observe(false, 2 * LAPSE_CONFIRM_MS + 20_010, 2 * LAPSE_CONFIRM_MS + 20_015)).toBe(true);
  });
});
