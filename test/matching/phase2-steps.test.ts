import { buildMatcher } from '../../src/core/matching';
import { buildMatchEngine } from '../../src/core/matching/matcher';
import { drain } from '../../src/core/matching/steps';
import { generate } from '../../bench/matching-data';
import { visible } from './support/visible-result';
import { PEOPLE_SETTINGS } from './support/people-settings';

const PEOPLE = PEOPLE_SETTINGS;

/**
 * Phase 2 (the model's estimate and scoring over every new account) is written in steps so that the
 * run matcher gives the event loop a turn between them (docs/matching.md, "Threads"): in one step it
 * held the loop 9.5 s at 100k x 100k. Counted here on the generator itself: no timing involved.
 */
describe('phase 2 in steps', () => {
  const { identities, accounts } = generate(5, 600, 1200);

  for (const estimateOnly of [true, false]) {
    it(`${estimateOnly ? 'estimate' : 'estimate and score'}: many yields, the same result as in one go`, () => {
      const engine = buildMatchEngine(PEOPLE);
      engine.addBaseline(identities);
      const B = engine.appendNew(accounts);
      const slice = engine.blockSlice(B, 0, accounts.length);
      const steps = engine.finishSlices(B, accounts.length, [slice], Infinity, estimateOnly);
      let yields = 0;
      let r = steps.next();
      while (!r.done) {
        yields++;
        r = steps.next();
      }
      engine.dropNew(B);
      // u alone draws 100,000 random pairs (a yield every 2,048), and EM iterates over every account.
      expect(yields).toBeGreaterThanOrEqual(40);
      if (estimateOnly) return;
      const sync = buildMatcher(PEOPLE);
      sync.addBaseline(identities);
      const expected = sync.match(accounts, { topK: Infinity });
      expect(r.value.duplicates.size).toBeGreaterThan(0);
      expect(visible(r.value)).toEqual(visible(expected));
    });
  }

  it('drain returns what the steps return', () => {
    function* three(): Generator<void, number, void> {
      yield;
      yield;
      return 3;
    }
    expect(drain(three())).toBe(3);
  });
});
