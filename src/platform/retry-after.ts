/**
 * Parses a Retry-After header value into milliseconds from `nowMs`: either delay-seconds
 * ("120", "1.5") or an HTTP date. Returns undefined when absent or unreadable, so the caller
 * falls back to its own backoff. A date in the past means "now" (0).
 */
export function parseRetryAfter(value: unknown, nowMs: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 ? Math.round(raw * 1000) : undefined;
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // Only accept something that looks like a date, so "-5" or "soon" do not parse as one.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
