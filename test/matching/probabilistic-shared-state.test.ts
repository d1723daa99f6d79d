import { MAX_NAME_TOKENS, prepareName } from '../../src/core/matching/algorithms/name-similarity';
import { sharedTokens } from '../../src/core/matching/probabilistic/model';
import { nameTokens } from '../../src/core/matching/normalize';

/**
 * The model keeps a record's name tokens as the name matcher's own list when that list holds exactly
 * the same tokens; otherwise (the matcher prepared another value of a multi-valued attribute, or cut
 * a long name) its own list, or the model would compare tokens of a value it was not given.
 */
describe('probabilistic model: name tokens shared with the name matcher only when equal', () => {
  it('shares the matcher list for the same value', () => {
    const own = nameTokens('maria del carmen lopez');
    const prepared = prepareName('maria del carmen lopez');
    expect(sharedTokens(own, prepared)).toBe(prepared!.tokens);
  });

  it('keeps its own list when the matcher prepared another value, cut the name, or is no name matcher', () => {
    const dashes = nameTokens('---');
    expect(sharedTokens(dashes, prepareName('john smith'))).toBe(dashes);
    const other = nameTokens('jon smith');
    expect(sharedTokens(other, prepareName('john smith'))).toBe(other);
    const long = 'a b c d e f g h i j';
    const tokens = nameTokens(long);
    expect(tokens.length).toBeGreaterThan(MAX_NAME_TOKENS);
    expect(sharedTokens(tokens, prepareName(long))).toBe(tokens);
    expect(sharedTokens(other, 'jon smith')).toBe(other);
    expect(sharedTokens(other, undefined)).toBe(other);
  });
});
