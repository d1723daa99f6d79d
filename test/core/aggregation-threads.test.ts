import { createAccountListCommand } from '../../src/core/commands/account-commands';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import { aggregate, PROBABILISTIC, RULES, tenant } from './aggregation-output';
import { context, failure } from './support';
import { scaled } from '../support/time-factor';

describe('aggregation with matching threads', () => {
  afterEach(() => expect(liveMatchingThreads()).toBe(0));

  for (const [label, matching, extra] of [
    ['rules, default batches (250)', RULES, {}],
    [
      'probabilistic, batching off (the estimate over every new account is the parallel part)',
      PROBABILISTIC,
      { enableBatching: false },
    ],
  ] as const) {
    it(
      `${label}: the same accounts and review forms as one thread`,
      async () => {
        const one = await aggregate(tenant(matching, extra, { threads: 1, minRecords: 0 }));
        const three = await aggregate(tenant(matching, extra, { threads: 3, minRecords: 0 }));
        expect(three).toEqual(one);
        // Enough review forms that equal results say something (the simulated tenant's duplicates; the
        // probabilistic model opens 7 since it counts a name once: names alone stay below its threshold).
        expect((one as { reviews: unknown[] }).reviews.length).toBeGreaterThanOrEqual(5);
      },
      scaled(120_000),
    );
  }

  it('default parallelism: same output, and no thread is left when the run ends', async () => {
    const extra = { enableBatching: true, batchSize: 200 };
    const one = await aggregate(tenant(RULES, extra, { threads: 1, minRecords: 0 }));
    expect(await aggregate(tenant(RULES, extra))).toEqual(one);
  });

  it('a cancelled run ends its threads', async () => {
    const h = tenant(RULES, { enableBatching: true, batchSize: 200 }, { threads: 3, minRecords: 0 });
    const abort = new AbortController();
    const iter = createAccountListCommand(h.deps)({}, h.config, context([], abort.signal))[Symbol.asyncIterator]();
    await iter.next();
    expect(liveMatchingThreads()).toBe(2);
    abort.abort();
    await iter.return?.();
    expect(liveMatchingThreads()).toBe(0);
  });

  it('batches too small for threads (batching off: one account at a time, rules model): no thread starts', async () => {
    const h = tenant(RULES, { enableBatching: false }, { threads: 3, minRecords: 0 });
    const iter = createAccountListCommand(h.deps)({}, h.config, context())[Symbol.asyncIterator]();
    await iter.next();
    expect(liveMatchingThreads()).toBe(0);
    await iter.return?.();
  });

  it('a failed run ends its threads', async () => {
    const h = tenant(RULES, { enableBatching: true, batchSize: 200 }, { threads: 3, minRecords: 0 });
    let reviews = 0;
    h.deps.reviewQueue = () =>
      ({
        submit: async () => {
          if (++reviews === 3) throw new Error('review store down');
        },
      }) as never;
    expect((await failure(createAccountListCommand(h.deps)({}, h.config, context()))).message).toMatch(
      /review store down/,
    );
  });
});
