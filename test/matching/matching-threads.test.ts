import { type MatchRecord, buildMatcher } from '../../src/core/matching';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// buildSync: no esbuild service process lives on in the jest worker (the run checks none is left).
import { buildSync } from 'esbuild';
import { buildRunMatcher } from '../../src/core/matching/parallel/parallelism';
import { buildParallelMatcher } from '../../src/core/matching/parallel/parallel-matcher';
import type { RecordColumns } from '../../src/core/matching/parallel/record-columns';
import type { Shard } from '../../src/core/matching/parallel/shard';
import { liveMatchingThreads, workerShard } from '../../src/core/matching/parallel/worker-shard';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';
import { visible } from './support/visible-result';
import { PEOPLE_AND_LOGIN_SETTINGS } from './support/people-settings';
import { scaled } from '../support/time-factor';

const RULES = MAIN_SETTINGS;

const PROBABILISTIC = PEOPLE_AND_LOGIN_SETTINGS;

describe('matching in worker threads', () => {
  afterEach(() => expect(liveMatchingThreads()).toBe(0));

  for (const [label, settings] of [
    ['rules', RULES],
    ['probabilistic', PROBABILISTIC],
  ] as const) {
    it(
      `${label}: 3 threads give the one-thread result, batch after batch`,
      async () => {
        const { identities, accounts } = generate(5, 700, 700);
        const single = buildMatcher(settings);
        const threads = buildRunMatcher(settings, {}, { threads: 3, minRecords: 0 });
        try {
          for (let i = 0; i < identities.length; i += 300) {
            single.addBaseline(identities.slice(i, i + 300));
            threads.addBaseline(identities.slice(i, i + 300));
          }
          expect(liveMatchingThreads()).toBe(2);
          let found = 0;
          for (let i = 0; i < accounts.length; i += 240) {
            const news: MatchRecord[] = accounts.slice(i, i + 240);
            const want = single.match(news);
            expect(JSON.stringify(visible(await threads.match(news)))).toBe(JSON.stringify(visible(want)));
            found += want.stats.accountsWithDuplicates;
            const created = news.filter((r) => !want.duplicates.has(r.id)).map((r) => ({ ...r, id: `k-${r.id}` }));
            single.addBaseline(created);
            threads.addBaseline(created);
          }
          expect(found).toBeGreaterThan(50);
        } finally {
          await threads.close();
        }
      },
      scaled(120_000),
    );
  }

  it('below minRecords no thread starts; at it they start, and close() ends them', async () => {
    const { identities, accounts } = generate(6, 300, 200);
    const m = buildRunMatcher(RULES, {}, { threads: 2, minRecords: 450 });
    try {
      m.addBaseline(identities);
      await m.match(accounts.slice(0, 100));
      expect(liveMatchingThreads()).toBe(0);
      await m.match(accounts.slice(0, 150));
      expect(liveMatchingThreads()).toBe(1);
    } finally {
      await m.close();
    }
    expect(liveMatchingThreads()).toBe(0);
    // closed: it still matches, in-thread
    expect((await m.match(accounts.slice(0, 100))).stats.accounts).toBe(100);
    expect(liveMatchingThreads()).toBe(0);
  });

  it("in a single-file bundle (the connector's) there is no worker entry: matching stays in-thread", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fusion-bundle-'));
    const src = join(__dirname, '../../src/core/matching');
    writeFileSync(
      join(dir, 'entry.ts'),
      `import { buildRunMatcher } from ${JSON.stringify(join(src, 'parallel/parallelism'))};
       import { liveMatchingThreads, workerEntryAvailable } from ${JSON.stringify(join(src, 'parallel/worker-shard'))};
       const settings = ${JSON.stringify(RULES)};
       const m = buildRunMatcher(settings, {}, { threads: 4, minRecords: 0 });
       const rec = (id: string) => ({ id, attributes: { lastName: 'Smith', displayName: 'Ann Smith' } });
       m.addBaseline(Array.from({ length: 100 }, (_, i) => rec('i' + i)));
       m.match(Array.from({ length: 100 }, (_, i) => rec('a' + i))).then(async (r) => {
         const live = liveMatchingThreads();
         await m.close();
         process.stdout.write(JSON.stringify({ available: workerEntryAvailable(), live, found: r.duplicates.size }));
       });`,
    );
    buildSync({
      entryPoints: [join(dir, 'entry.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile: join(dir, 'index.js'),
      logLevel: 'error',
    });
    const out = execFileSync(process.execPath, [join(dir, 'index.js')], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ available: false, live: 0, found: 100 });
  });

  it('a thread that dies fails the match (no hang); the matcher stays usable in-thread after close()', async () => {
    const { identities, accounts } = generate(8, 200, 100);
    let started: Shard | undefined;
    const m = buildParallelMatcher(
      RULES,
      {},
      {
        shards: 1,
        minRecords: 0,
        startShard: (settings) => (started = workerShard(settings)),
      },
    );
    const want = buildMatcher(RULES);
    want.addBaseline(identities);
    try {
      m.addBaseline(identities);
      expect(liveMatchingThreads()).toBe(1);
      await started!.close(); // the thread is gone, as if it had crashed
      await expect(m.match(accounts)).rejects.toThrow(/matching thread exited/);
    } finally {
      await m.close();
    }
    expect(JSON.stringify(visible(await m.match(accounts)))).toBe(JSON.stringify(visible(want.match(accounts))));
  });

  it('a slice that fails in a thread rejects with its error', async () => {
    const shard = workerShard(RULES);
    try {
      const bad = { records: 1, attributes: 4 } as unknown as RecordColumns;
      await expect(shard.block(bad, 0, 1)).rejects.toThrow(/^matching thread: /);
    } finally {
      await shard.close();
    }
  });

  it('the default is every core', async () => {
    const { defaultParallelism } = await import('../../src/core/matching/parallel/parallelism');
    const { availableParallelism } = await import('node:os');
    expect(defaultParallelism().threads).toBe(availableParallelism());
  });
});
