/**
 * Independent platform calls of one run, several at once: `width` in flight, so the rate limiter paces
 * them, not each call's round trip (one at a time, a platform answering in 200 ms would hold 50,000 forms
 * for almost three hours). `record` sees each result in the items' order, whatever order the platform
 * answers in. After a failure no further item is started; those in flight are waited for and recorded
 * (what the platform did must not be lost), then the first error is thrown.
 */
export async function inFlightInOrder<T, R>(
  items: Iterable<T>,
  width: number,
  start: (item: T) => Promise<R>,
  record: (result: R, item: T) => void,
): Promise<void> {
  const most = Math.max(1, Math.floor(width));
  const inFlight: Array<{ item: T; result: Promise<R> }> = [];
  let failure: { error: unknown } | undefined;
  const settle = async (): Promise<void> => {
    const next = inFlight.shift() as { item: T; result: Promise<R> };
    try {
      record(await next.result, next.item);
    } catch (error) {
      failure ??= { error };
    }
  };
  for (const item of items) {
    if (failure) break;
    const result = start(item);
    // Settled later, in order: a rejection must not count as unhandled meanwhile.
    result.catch(() => undefined);
    inFlight.push({ item, result });
    if (inFlight.length >= most) await settle();
  }
  while (inFlight.length) await settle();
  if (failure) throw failure.error;
}
