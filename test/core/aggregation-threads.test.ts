import { createAccountListCommand } from '../../src/core/commands/account-commands';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import { aggregate, PROBABILISTIC, RULES, RULES_UNPLANNED, tenant } from './aggregation-output';
import { context, failure, type LogLine } from './support';
import { scaled } from '../support/time-factor';

/** Thread costs scaled to a 400-identity tenant (the default, THREAD_COST, is a production pod's). */
const SMALL = { perRecord: 1_200, fixed: 0, ownerPerRecord: 2_500 };

describe('aggregation with matching threads', () => {
  afterEach(() => expect(liveMatchingThreads()).toBe(0));

  for (const [label, matching, extra] of [
    ['rules, default batches (250), decided in partitions', RULES, {}],
    ['rules without a partition plan, default batches (250), phase 1 over threads', RULES_UNPLANNED, {}],
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

  /**
   * Each further thread holds its own copy of the records. A cost model at this tenant's scale (no
   * fixed part: the measured 64 MiB per thread would decide alone at 400 records) and a limit sized
   * so that 3 threads fit the 400 identities (up to 449 records), 2 up to 594 and 1 from 595 on
   * (threadCopiesAllowed): the threads end as the run's created accounts join the records.
   */
  it('a memory limit the records outgrow: fewer threads, then one, each step logged, the same output', async () => {
    const extra = { enableBatching: true, batchSize: 100 };
    const one = await aggregate(tenant(RULES, extra, { threads: 1, minRecords: 0 }));
    const lines: LogLine[] = [];
    const capped = tenant(RULES, extra, { threads: 3, minRecords: 0, memoryLimit: 2_750_000, threadCost: SMALL });
    expect(await aggregate(capped, lines)).toEqual(one);
    const steps = lines.filter((l) => l.level === 'warn' && l.msg.startsWith('Matching uses'));
    expect(steps.map((l) => [l.fields.threads, l.fields.wanted])).toEqual([
      [2, 3],
      [1, 3],
    ]);
    expect(steps[0]!.msg).toMatch(/instead of 3: each further thread holds its own copy of the \d{3} records/);
    expect(steps[0]!.msg).toContain("raise the worker's memory limit");
    const [at2, at1] = steps.map((l) => l.fields.records as number);
    expect(at2).toBeGreaterThanOrEqual(450);
    expect(at2).toBeLessThanOrEqual(594);
    expect(at1).toBeGreaterThanOrEqual(595);
  });

  it('a memory limit too small for any copy of the baseline: no thread starts, the same output', async () => {
    const extra = { enableBatching: true, batchSize: 100 };
    const one = await aggregate(tenant(RULES, extra, { threads: 1, minRecords: 0 }));
    const h = tenant(RULES, extra, { threads: 3, minRecords: 0, memoryLimit: 1_000_000, threadCost: SMALL });
    const iter = createAccountListCommand(h.deps)({}, h.config, context())[Symbol.asyncIterator]();
    await iter.next();
    expect(liveMatchingThreads()).toBe(0);
    await iter.return?.();
    const lines: LogLine[] = [];
    const capped = tenant(RULES, extra, { threads: 3, minRecords: 0, memoryLimit: 1_000_000, threadCost: SMALL });
    expect(await aggregate(capped, lines)).toEqual(one);
    const steps = lines.filter((l) => l.level === 'warn' && l.msg.startsWith('Matching uses'));
    expect(steps.map((l) => [l.fields.threads, l.fields.wanted, l.fields.records])).toEqual([[1, 3, 400]]);
  });

  it('a cancelled run ends its threads', async () => {
    const h = tenant(RULES_UNPLANNED, { enableBatching: true, batchSize: 200 }, { threads: 3, minRecords: 0 });
    const abort = new AbortController();
    const iter = createAccountListCommand(h.deps)({}, h.config, context([], abort.signal))[Symbol.asyncIterator]();
    await iter.next();
    expect(liveMatchingThreads()).toBe(2);
    abort.abort();
    await iter.return?.();
    expect(liveMatchingThreads()).toBe(0);
  });

  it('batches too small for threads (batching off: one account at a time, rules model): no thread starts', async () => {
    const h = tenant(RULES_UNPLANNED, { enableBatching: false }, { threads: 3, minRecords: 0 });
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
