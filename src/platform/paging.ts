/** One page of an offset-paged list endpoint. */
export interface OffsetPage<T> {
  items: T[];
  /** X-Total-Count, when the server sent it (asked for on the first page). */
  total?: number;
}

/**
 * Streams an offset/limit listing one page at a time, fetching the next page only when the
 * consumer asks. The offset advances by the number of items received (not by the page size),
 * so a server that serves smaller pages than asked neither skips nor re-reads items. With a
 * known total the listing ends when the total is reached or a page is empty; without one, on a
 * short page. A failing page throws: the listing never ends early in silence.
 */
export async function* offsetPages<T>(pageSize: number, fetchPage: (offset: number, limit: number, first: boolean) => Promise<OffsetPage<T>>): AsyncGenerator<T, void, undefined> {
  let offset = 0;
  let total: number | undefined;
  for (let first = true; ; first = false) {
    const page = await fetchPage(offset, pageSize, first);
    if (first && page.total !== undefined && Number.isFinite(page.total)) total = page.total;
    for (const item of page.items) yield item;
    offset += page.items.length;
    if (page.items.length === 0) return;
    if (total !== undefined ? offset >= total : page.items.length < pageSize) return;
  }
}

/**
 * Streams a search with `searchAfter` paging (sorted by a unique key): no offset, so no 10,000
 * result wall. Ends on a short page.
 */
export async function* searchAfterPages<T>(pageSize: number, keyOf: (item: T) => string, fetchPage: (searchAfter: string[] | undefined, limit: number) => Promise<T[]>): AsyncGenerator<T, void, undefined> {
  let after: string[] | undefined;
  for (;;) {
    const items = await fetchPage(after, pageSize);
    for (const item of items) yield item;
    if (items.length < pageSize) return;
    after = [keyOf(items[items.length - 1])];
  }
}
