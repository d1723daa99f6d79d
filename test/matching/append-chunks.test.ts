import { buildMatcher } from '../../src/core/matching';
import { EngineRecords } from '../../src/core/matching/engine-records';
import { buildParallelMatcher } from '../../src/core/matching/parallel/parallel-matcher';
import { APPEND_CHUNK } from '../../src/core/matching/parallel/loop-turns';
import type { Shard } from '../../src/core/matching/parallel/shard';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';
import { visible } from './support/visible-result';
import { scaled } from '../support/time-factor';
import { PEOPLE_SETTINGS } from './support/people-settings';

// Each probabilistic test matches the accounts twice, each time estimating the model (u from 100,000 random pairs).
jest.setTimeout(scaled(90_000));

const PROBABILISTIC = PEOPLE_SETTINGS;

const noShard = (): Shard => {
  throw new Error('no shard in this test');
};

/**
 * A call's new accounts are appended (prepared and indexed) in chunks of APPEND_CHUNK with a turn of
 * the event loop between (appending 100k at once held the loop about 5 s): the result is the one
 * synchronous call's, and no single append takes more than a chunk.
 */
describe('a call appends its new accounts in chunks', () => {
  const { identities, accounts } = generate(9, 200, 2 * APPEND_CHUNK + 100);

  afterEach(() => jest.restoreAllMocks());

  for (const [label, settings] of [
    ['rules', MAIN_SETTINGS],
    ['probabilistic', PROBABILISTIC],
  ] as const) {
    it(`${label}: the same result as one synchronous call, appends of at most a chunk with turns between`, async () => {
      const sync = buildMatcher(settings);
      sync.addBaseline(identities);
      const want = sync.match(accounts, { topK: Infinity });

      const m = buildParallelMatcher(settings, {}, { shards: 0, startShard: noShard, minRecords: 0 });
      m.addBaseline(identities);
      // What happens in order: each append of new records (batch) and each turn of the event loop.
      const log: string[] = [];
      const append = EngineRecords.prototype.append;
      jest.spyOn(EngineRecords.prototype, 'append').mockImplementation(function (this: EngineRecords, ...args) {
        if (args[1] === true) log.push(`append ${args[0].length}`);
        return append.apply(this, args);
      });
      let ticking = true;
      const tick = (): void => {
        log.push('turn');
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      let got;
      try {
        got = await m.match(accounts, { topK: Infinity });
      } finally {
        ticking = false;
        await m.close();
      }

      expect(want.duplicates.size).toBeGreaterThan(20);
      expect(visible(got)).toEqual(visible(want));
      const appends = log.filter((e) => e.startsWith('append'));
      expect(appends).toEqual([`append ${APPEND_CHUNK}`, `append ${APPEND_CHUNK}`, 'append 100']);
      // A turn of the event loop between every two appends.
      const at = log.map((e, i) => (e.startsWith('append') ? i : -1)).filter((i) => i >= 0);
      for (let k = 1; k < at.length; k++) expect(log.slice(at[k - 1]! + 1, at[k]!)).toContain('turn');
    });
  }
});
