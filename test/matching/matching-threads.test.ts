import {
  type MatchRecord,
  type MatchResult,
  type MatchingSettings,
  buildMatcher,
  parseMatchingSettings,
} from '../../src/core/matching';
import { buildRunMatcher } from '../../src/core/matching/parallel/parallelism';
import { liveMatchingThreads } from '../../src/core/matching/parallel/worker-shard';
import { generate } from '../../bench/matching-data';

function visible(result: MatchResult): string {
  const { buildMs, matchMs, ...stats } = result.stats;
  void buildMs;
  void matchMs;
  return JSON.stringify({ duplicates: [...result.duplicates.entries()], stats });
}

const RULES: MatchingSettings = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
    { attribute: 'userName', algorithm: 'levenshtein', threshold: 80, mandatory: false },
  ],
  reviewTopK: 10,
};

const PROBABILISTIC = parseMatchingSettings({
  matching: {
    model: 'probabilistic',
    attributes: [
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
      { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92 },
      { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
      { attribute: 'userName', algorithm: 'levenshtein', threshold: 80 },
    ],
  },
});

describe('matching in worker threads', () => {
  afterEach(() => expect(liveMatchingThreads()).toBe(0));

  for (const [label, settings] of [
    ['rules', RULES],
    ['probabilistic', PROBABILISTIC],
  ] as const) {
    it(`${label}: 3 threads give the one-thread result, batch after batch`, async () => {
      const { identities, accounts } = generate(5, 1200, 1200);
      const single = buildMatcher(settings);
      const threads = buildRunMatcher(settings, {}, { threads: 3, minRecords: 0 });
      try {
        for (let i = 0; i < identities.length; i += 500) {
          single.addBaseline(identities.slice(i, i + 500));
          threads.addBaseline(identities.slice(i, i + 500));
        }
        expect(liveMatchingThreads()).toBe(2);
        let found = 0;
        for (let i = 0; i < accounts.length; i += 400) {
          const news: MatchRecord[] = accounts.slice(i, i + 400);
          const want = single.match(news);
          expect(visible(await threads.match(news))).toBe(visible(want));
          found += want.stats.accountsWithDuplicates;
          const created = news.filter((r) => !want.duplicates.has(r.id)).map((r) => ({ ...r, id: `k-${r.id}` }));
          single.addBaseline(created);
          threads.addBaseline(created);
        }
        expect(found).toBeGreaterThan(100);
      } finally {
        await threads.close();
      }
    });
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

  it('the default is every core', async () => {
    const { defaultParallelism } = await import('../../src/core/matching/parallel/parallelism');
    const { availableParallelism } = await import('node:os');
    expect(defaultParallelism().threads).toBe(availableParallelism());
  });
});
