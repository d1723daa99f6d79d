import { offsetPages, searchAfterPages, type OffsetPage } from '../../src/platform/paging';

/** A list server over `data`: serves at most `cap` items per page, counts requests in flight. */
function server(data: number[], opts: { cap?: number; withTotal?: boolean; failAt?: number } = {}) {
  const state = { inFlight: 0, maxInFlight: 0, requests: [] as number[], aborted: 0 };
  const fetch = async (
    offset: number,
    limit: number,
    first: boolean,
    signal: AbortSignal,
  ): Promise<OffsetPage<number>> => {
    state.requests.push(offset);
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    try {
      await new Promise<void>((resolve, reject) => {
        // Remove the listener when the page completes, as the real executor does, so none pile up.
        const onAbort = (): void => {
          clearTimeout(t);
          state.aborted++;
          reject(new Error('aborted'));
        };
        const t = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, 2);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      if (opts.failAt === offset) throw new Error(`page at ${offset} failed`);
      const items = data.slice(offset, offset + Math.min(limit, opts.cap ?? limit));
      return { items, total: first && opts.withTotal !== false ? data.length : undefined };
    } finally {
      state.inFlight--;
    }
  };
  return { fetch, state };
}

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const data = Array.from({ length: 103 }, (_, i) => i);

describe('offsetPages', () => {
  it.each([
    ['sequential, no total', { withTotal: false }, 1],
    ['read-ahead 4 with total', {}, 4],
    ['server caps pages below the page size (read-ahead recovers)', { cap: 7 }, 4],
    ['server caps pages, no total', { cap: 7, withTotal: false }, 1],
  ])('%s: every item once, in order', async (_name, opts, ahead) => {
    const s = server(data, opts);
    expect(await all(offsetPages(10, s.fetch, ahead))).toEqual(data);
  });

  it('keeps at most readAhead pages in flight', async () => {
    const s = server(data);
    await all(offsetPages(10, s.fetch, 3));
    expect(s.state.maxInFlight).toBe(3);
  });

  it('throws at the failed page after yielding everything before it', async () => {
    const s = server(data, { failAt: 30 });
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const x of offsetPages(10, s.fetch, 4)) seen.push(x);
      })(),
    ).rejects.toThrow('page at 30 failed');
    expect(seen).toEqual(data.slice(0, 30));
  });

  it('aborts pages in flight when the consumer stops', async () => {
    const s = server(data);
    for await (const x of offsetPages(10, s.fetch, 4)) if (x === 12) break;
    await new Promise((r) => setTimeout(r, 10));
    expect(s.state.aborted).toBeGreaterThan(0);
    expect(s.state.inFlight).toBe(0);
  });

  it('reads items added during the listing past the total of the first page', async () => {
    const live = [...data];
    const s = server(live);
    const out: number[] = [];
    for await (const x of offsetPages(10, s.fetch, 4)) {
      out.push(x);
      if (x === 0) live.push(...Array.from({ length: 25 }, (_, i) => 1000 + i)); // total was 103
    }
    expect(out).toEqual(live);
    expect(out).toHaveLength(128);
  });

  it('a total that shrinks during the listing ends on the short page, without error or loop', async () => {
    const live = [...data];
    const s = server(live);
    const out: number[] = [];
    for await (const x of offsetPages(10, s.fetch, 4)) {
      out.push(x);
      if (x === 0) live.splice(55); // 48 fewer than counted: the page at 50 is short
    }
    expect(out).toEqual(data.slice(0, 55));
    expect(s.state.requests.length).toBeLessThan(15);
  });

  it('a total that shrinks below what was requested ahead ends on the empty page', async () => {
    const live = [...data];
    const s = server(live);
    const out: number[] = [];
    for await (const x of offsetPages(10, s.fetch, 4)) {
      out.push(x);
      if (x === 0) live.splice(10); // every page after the first is now empty
    }
    expect(out).toEqual(data.slice(0, 10));
  });

  it('a total that is a multiple of the page size costs one extra (empty) page', async () => {
    const hundred = data.slice(0, 100);
    const s = server(hundred);
    expect(await all(offsetPages(10, s.fetch, 4))).toEqual(hundred);
    expect(s.state.requests).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
  });

  it('a short last page within the total ends the listing at once', async () => {
    const s = server(data);
    await all(offsetPages(10, s.fetch, 4));
    expect(s.state.requests).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
  });

  it('requests nothing past maxItems, even when the page at the cap was full', async () => {
    const s = server(data);
    const out = await all(offsetPages(10, s.fetch, 4, 30));
    expect(out).toEqual(data.slice(0, 30));
    expect(s.state.requests).toEqual([0, 10, 20]);
  });

  it('ends at an empty first page', async () => {
    expect(await all(offsetPages(10, server([]).fetch, 4))).toEqual([]);
  });
});

describe('searchAfterPages', () => {
  it('passes the last key of each page and ends on a short page', async () => {
    const calls: (string[] | undefined)[] = [];
    const ids = Array.from({ length: 25 }, (_, i) => `id${String(i).padStart(2, '0')}`);
    const out = await all(
      searchAfterPages(
        10,
        (x: string) => x,
        async (after) => {
          calls.push(after);
          const start = after ? ids.indexOf(after[0]) + 1 : 0;
          return ids.slice(start, start + 10);
        },
      ),
    );
    expect(out).toEqual(ids);
    expect(calls).toEqual([undefined, ['id09'], ['id19']]);
  });
});
