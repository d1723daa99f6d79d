import { setMaxListeners } from 'node:events';

/** One page of an offset-paged list endpoint. */
export interface OffsetPage<T> {
  items: T[];
  /** X-Total-Count, when the server sent it (asked for on the first page). */
  total?: number;
}

export type FetchOffsetPage<T> = (
  offset: number,
  limit: number,
  first: boolean,
  signal: AbortSignal,
) => Promise<OffsetPage<T>>;

/**
 * Streams an offset/limit listing, yielding items in order as pages arrive.
 *
 * - The offset advances by the number of items received (not by the page size), so a server that
 *   serves smaller pages than asked neither skips nor re-reads items.
 * - Only a page shorter than asked (or empty) ends the listing. The total (X-Total-Count of the
 *   first page) is a snapshot: it only bounds how far pages are requested ahead, so one consumer
 *   can use the whole request budget even when each page takes longer than 1/RPS. Items added
 *   during the listing are still read past it (one page at a time), and a total that shrinks
 *   meanwhile ends on the first short page. Memory stays bounded by `readAhead` pages.
 * - A page shorter than asked before the total is reached drops the read-ahead and continues one
 *   page at a time from the true offset; there, a short page may be the server's own cap, so only
 *   an empty page ends the listing. Without a total the listing is sequential in the same way.
 * - `maxItems` bounds what is requested; the caller still stops consuming at its own limit.
 * - A failing page throws: the listing never ends early in silence. When the consumer stops or a
 *   page fails, pages still in flight are aborted.
 */
export async function* offsetPages<T>(
  pageSize: number,
  fetchPage: FetchOffsetPage<T>,
  readAhead = 1,
  maxItems = Infinity,
): AsyncGenerator<T, void, undefined> {
  const stop = new AbortController();
  // Each page in flight links one listener (and its retries may add more) to `stop`: allow the
  // read-ahead depth without Node's leak warning, which is meant for listeners that pile up.
  setMaxListeners(Math.max(10, readAhead * 4), stop.signal);
  const queue: { offset: number; page: Promise<OffsetPage<T>> }[] = [];
  try {
    const first = await fetchPage(0, pageSize, true, stop.signal);
    for (const item of first.items) yield item;
    let offset = first.items.length;
    if (first.items.length === 0) return;
    // A page larger than asked means the server ignored paging and sent everything.
    if (first.items.length > pageSize) return;
    // With a cap (aggregation batch size), nothing past it is requested, ahead or not.
    const total =
      first.total !== undefined && Number.isFinite(first.total) ? Math.min(first.total, maxItems) : undefined;
    if (total === undefined) {
      // Without a total, a short page may be the server's own cap rather than the end: only an
      // empty page ends the listing (one extra request).
      yield* sequential(offset, false);
      return;
    }
    if (first.items.length < pageSize) {
      // Short first page: the end, unless the server caps pages below the page size.
      if (offset < total) yield* sequential(offset, false);
      return;
    }

    const depth = Math.max(1, readAhead);
    let next = offset;
    const fill = (): void => {
      while (queue.length < depth && next < total) {
        const page = fetchPage(next, pageSize, false, stop.signal);
        // Observed later in order; until then a rejection must not count as unhandled.
        page.catch(() => undefined);
        queue.push({ offset: next, page });
        next += pageSize;
      }
    };
    while (offset < total) {
      fill();
      const head = queue.shift();
      if (!head) return;
      const page = await head.page;
      for (const item of page.items) yield item;
      offset += page.items.length;
      if (page.items.length === 0) return; // fewer items than counted: they were removed meanwhile
      if (page.items.length > pageSize) return;
      if (page.items.length < pageSize) {
        // At or past the total, a short page is the end (the total may also have shrunk).
        if (offset >= total) return;
        // Before it, the server serves smaller pages than asked (or items were removed): what
        // was requested ahead has wrong offsets.
        stop.abort();
        await Promise.allSettled(queue.splice(0).map((q) => q.page));
        yield* offsetPages<T>(pageSize, (o, l, _f, s) => fetchPage(offset + o, l, false, s), 1, maxItems - offset);
        return;
      }
    }
    // The last page within the total was full: items added since the first page lie beyond it.
    if (offset < maxItems) yield* sequential(offset, true);
  } finally {
    stop.abort();
    queue.length = 0;
  }

  /** One page at a time from `from`; ends on an empty page, or a short one when `shortEnds`. */
  async function* sequential(from: number, shortEnds: boolean): AsyncGenerator<T, void, undefined> {
    let offset = from;
    while (offset < maxItems) {
      const page = await fetchPage(offset, pageSize, false, stop.signal);
      for (const item of page.items) yield item;
      offset += page.items.length;
      if (page.items.length === 0 || page.items.length > pageSize) return;
      if (shortEnds && page.items.length < pageSize) return;
    }
  }
}

/**
 * Streams a search with `searchAfter` paging (sorted by a unique key): no offset, so no 10,000
 * result wall. Sequential by nature (each page needs the last key of the one before); ends on a
 * short page.
 */
export async function* searchAfterPages<T>(
  pageSize: number,
  keyOf: (item: T) => string,
  fetchPage: (searchAfter: string[] | undefined, limit: number) => Promise<T[]>,
): AsyncGenerator<T, void, undefined> {
  let after: string[] | undefined;
  for (;;) {
    const items = await fetchPage(after, pageSize);
    for (const item of items) yield item;
    if (items.length < pageSize) return;
    after = [keyOf(items[items.length - 1])];
  }
}
