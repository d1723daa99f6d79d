/**
 * When a worker may believe that an api's reader lease lapsed. A missing lease is not proof on its
 * own: while Redis stalls (paused, a long fork, a saturated node) the api cannot renew it, the key
 * expires by Redis' clock, and when Redis answers again the worker's check may run before the api's
 * renewal that waited with it. So a lapse counts only when a second check, sent a full renewal
 * period after Redis was seen answering, still finds no lease, and that check was answered promptly.
 */
import { READER_LEASE_MS } from './result-keys';

/** How often the api renews its lease. */
export const READER_RENEW_MS = READER_LEASE_MS / 3;

/** A check answered slower than this saw a stalled Redis: what it says may predate the api's renewal. */
const PROMPT_MS = 2000;

/** A missing lease must still be missing in a check sent this long after the first one was answered. */
export const LAPSE_CONFIRM_MS = READER_RENEW_MS + PROMPT_MS;

export class LeaseLapse {
  private missingSince: number | undefined;

  /**
   * One check of the lease: whether it existed, when the check was sent and when it was answered
   * (the same clock, ms). True once the lapse is confirmed.
   */
  observe(present: boolean, sentAt: number, answeredAt: number): boolean {
    if (present) {
      this.missingSince = undefined;
      return false;
    }
    const prompt = answeredAt - sentAt <= PROMPT_MS;
    if (this.missingSince === undefined || !prompt) {
      this.missingSince = answeredAt;
      return false;
    }
    return sentAt - this.missingSince >= LAPSE_CONFIRM_MS;
  }
}
