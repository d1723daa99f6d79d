/**
 * Phase 1 hands each account's candidates to phase 2 in record order, whichever index generated them.
 * The index a thread or a child job picks per account follows its own caches, and the probabilistic
 * model sums over an account's candidates in the order it gets them: with an order of their own, a
 * queue-mode aggregation's probabilities differed from the one-process run's in the last bit
 * (bench:scale-out, probabilistic, 10k: "output DIFFERS").
 */
import { buildMatchEngine } from '../../src/core/matching/matcher';
import { generate, MAIN_SETTINGS } from '../../bench/matching-data';
import { PEOPLE_SETTINGS } from './support/people-settings';

const PEOPLE = PEOPLE_SETTINGS;

describe('blocked candidates come in record order', () => {
  test.each([
    ['rules, the bench configuration', MAIN_SETTINGS],
    ['probabilistic, names and e-mail', PEOPLE],
  ])('%s', (_label, settings) => {
    const { identities, accounts } = generate(7, 1_000, 300);
    const engine = buildMatchEngine(settings);
    engine.addBaseline(identities);
    const B = engine.appendNew(accounts);
    const slice = engine.blockSlice(B, 0, accounts.length);
    let unsortedBefore = 0;
    let withSeveral = 0;
    for (let k = 0; k < slice.count; k++) {
      const c = slice.candidates.subarray(slice.matchedStart[k]!, slice.matchedStart[k + 1]!);
      if (c.length > 1) withSeveral++;
      for (let j = 1; j < c.length; j++) if (c[j - 1]! >= c[j]!) unsortedBefore++;
    }
    // The check means something only where accounts have several candidates.
    expect(withSeveral).toBeGreaterThan(10);
    expect(unsortedBefore).toBe(0);
    engine.dropNew(B);
  });
});
