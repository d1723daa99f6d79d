import { createAccountListCommand } from '../../src/core/commands/account-commands';
import type { AccountItem } from '../../src/core/aggregation/connector-account';
import type { CallOptions, PlatformAccount, PlatformIdentity } from '../../src/core/ports/platform';
import { RecordingReviewQueue } from '../../src/core/ports/review-queue';
import { collect, failure, harness, run, type Harness } from './support';

const matching = {
  attributes: [{ attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: true }],
  maxReviewShare: 1,
};

/** A tenant after its first run: three people fused, their identities and connector accounts on the platform. */
async function laterRun(later: Record<string, unknown> = {}): Promise<Harness> {
  const h = harness({ matching, sources: ['LDAP'] });
  const ldap = h.fake.addSource('LDAP');
  for (const [n, [first, last]] of [
    ['Ada', 'Lovelace'],
    ['Alan', 'Turing'],
    ['Grace', 'Hopper'],
  ].entries())
    h.fake.addAccount(ldap, `L${n}`, { firstName: first, lastName: last });
  h.deps.reviewQueue = () => new RecordingReviewQueue();
  h.fake.ingest(h.own.id, (await collect(run(createAccountListCommand(h.deps), h))) as AccountItem[]);
  // A second account of Ada's: a namesake of her identity, found only against the baseline.
  h.fake.addAccount(ldap, 'L9', { firstName: 'Ada', lastName: 'Lovelace' });
  return { ...h, config: { ...h.config, ...later } };
}

type ListAccounts = Harness['fake']['listAccounts'];
type SearchIdentities = Harness['fake']['searchIdentities'];

/** Wraps the fake's two listings of a run's inputs: `own` for the connector accounts, `search` for the baseline. */
function around(
  h: Harness,
  own: (inner: () => AsyncIterable<PlatformAccount>, opts?: CallOptions) => AsyncIterable<PlatformAccount>,
  search: (inner: () => AsyncIterable<PlatformIdentity>, opts?: CallOptions) => AsyncIterable<PlatformIdentity>,
): void {
  const list: ListAccounts = h.fake.listAccounts.bind(h.fake);
  const find: SearchIdentities = h.fake.searchIdentities.bind(h.fake);
  h.fake.listAccounts = (query, opts?: CallOptions) =>
    query.sourceId === h.own.id ? own(() => list(query), opts) : list(query);
  h.fake.searchIdentities = (query, opts?: CallOptions) => search(() => find(query), opts);
}

/** Resolves once `signal` aborts; never otherwise. */
const aborted = (signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) =>
    signal?.aborted ? resolve() : signal?.addEventListener('abort', () => resolve(), { once: true }),
  );

/** A listing that yields nothing: it waits until its call is aborted, notes it, and fails as an aborted call does. */
function waitingForAbort(opts: CallOptions | undefined, noted: () => void): AsyncIterable<never> {
  return failing(aborted(opts?.signal).then(() => (noted(), new Error('aborted'))));
}

/** A listing whose first page fails with `error`. */
function failing(error: Error | Promise<Error>): AsyncIterable<never> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        throw await error;
      },
    }),
  };
}

describe("a run's inputs: connector accounts and identity baseline", () => {
  test('a later run reads them side by side: the connector accounts wait here until the search started, and the run is whole', async () => {
    const h = await laterRun();
    const reviews = new RecordingReviewQueue();
    h.deps.reviewQueue = () => reviews;
    let searchStarted!: () => void;
    const started = new Promise<void>((resolve) => (searchStarted = resolve));
    around(
      h,
      async function* (inner) {
        // Read one after the other, the search would never start: the run would hang here.
        await started;
        yield* inner();
      },
      async function* (inner) {
        searchStarted();
        yield* inner();
      },
    );
    const items = (await collect(run(createAccountListCommand(h.deps), h))) as AccountItem[];
    // The three connector accounts were read (kept, each once), and the baseline too: Ada's namesake waits for review.
    expect(items.map((i) => i.attributes.lastName).sort()).toEqual(['Hopper', 'Lovelace', 'Turing']);
    expect(h.summaries.at(-1)).toMatchObject({ baselineIdentities: 3, potentialDuplicates: 1 });
    expect(reviews.pending.map((r) => [r.accountName, r.candidates[0]?.candidateKind])).toEqual([['L9', 'identity']]);
  });

  test('a reset reads the connector accounts first: its baseline leaves out the identities of the accounts it drops', async () => {
    const h = await laterRun({ reset: true });
    const order: string[] = [];
    around(
      h,
      async function* (inner) {
        yield* inner();
        order.push('connector accounts read');
      },
      async function* (inner) {
        order.push('search started');
        yield* inner();
      },
    );
    const items = (await collect(run(createAccountListCommand(h.deps), h))) as AccountItem[];
    expect(order).toEqual(['connector accounts read', 'search started']);
    // Every account is rebuilt, Ada's two accounts as namesakes of each other only (not of her identity).
    expect(items).toHaveLength(3);
    expect(h.summaries.at(-1)).toMatchObject({ accountsReset: 3, baselineIdentities: 0 });
  });

  test("the connector accounts fail while the search waits: the search is stopped and their error is the run's", async () => {
    const h = await laterRun();
    let searchAborted = false;
    around(
      h,
      async function* (inner) {
        for await (const a of inner()) {
          yield a;
          throw Object.assign(new Error('connector accounts: page 2 failed'), { code: 'PLATFORM_REQUEST_FAILED' });
        }
      },
      (_inner, opts) => waitingForAbort(opts, () => (searchAborted = true)),
    );
    const error = await failure(run(createAccountListCommand(h.deps), h));
    expect(error).toMatchObject({ message: 'connector accounts: page 2 failed', code: 'PLATFORM_REQUEST_FAILED' });
    expect(searchAborted).toBe(true);
  });

  test("the search fails while the connector accounts wait: they are stopped and the search's error is the run's", async () => {
    const h = await laterRun();
    let listingAborted = false;
    around(
      h,
      (_inner, opts) => waitingForAbort(opts, () => (listingAborted = true)),
      () => failing(new Error('search: 400 Bad Request')),
    );
    const error = await failure(run(createAccountListCommand(h.deps), h));
    expect(error.message).toBe('search: 400 Bad Request');
    expect(listingAborted).toBe(true);
  });
});
