import { coerceToggle, readFormAnswer } from '../../src/core/review/form-answer';
import { buildFormContent, rankCandidates, storedCandidates } from '../../src/core/review/form-content';
import { accountIdOfForm, formDescription, formName, labelsOfForm } from '../../src/core/review/form-naming';
import { candidates, pendingReview } from './support';

const CANDS = [
  { id: 'id-1', kind: 'identity' as const, score: 95, scores: {} },
  { id: 'acc-2', kind: 'account' as const, score: 90, scores: {} },
];

describe('review answers', () => {
  it('coerces the toggle: booleans and exactly "true"/"false"; anything else is rejected with the value', () => {
    expect(coerceToggle(true)).toBe(true);
    expect(coerceToggle('true')).toBe(true);
    expect(coerceToggle(false)).toBe(false);
    expect(coerceToggle('false')).toBe(false);
    expect(coerceToggle(undefined)).toBeUndefined();
    expect(coerceToggle(null)).toBeUndefined();
    for (const bad of ['TRUE', 'yes', '', 1, 0, {}, ['true']]) {
      const r = coerceToggle(bad);
      expect(r).toEqual({ invalid: expect.stringContaining(JSON.stringify(bad)) });
    }
  });

  it('the string "false" with a chosen candidate links (the incumbent read it as "new identity")', () => {
    expect(readFormAnswer({ newIdentity: 'false', identity: 'id-1' }, CANDS)).toEqual({
      kind: 'link',
      identityId: 'id-1',
      candidateKind: 'identity',
    });
    expect(readFormAnswer({ identity: ['acc-2'], comments: 'same badge' }, CANDS)).toEqual({
      kind: 'link',
      identityId: 'acc-2',
      candidateKind: 'account',
      comments: 'same badge',
    });
    expect(readFormAnswer({ identity: [{ value: 'id-1', label: 'Ann' }] }, CANDS)).toMatchObject({
      kind: 'link',
      identityId: 'id-1',
    });
    expect(readFormAnswer({ newIdentity: 'true' }, CANDS)).toEqual({ kind: 'new-identity' });
    expect(readFormAnswer({ newIdentity: true, identity: [] }, CANDS)).toEqual({ kind: 'new-identity' });
  });

  it('rejects ambiguous, empty, unknown and malformed answers with a reason', () => {
    expect(readFormAnswer({ newIdentity: true, identity: 'id-1' }, CANDS)).toEqual({
      kind: 'invalid',
      reason: expect.stringContaining('both'),
    });
    expect(readFormAnswer({}, CANDS)).toEqual({
      kind: 'invalid',
      reason: expect.stringContaining('without a decision'),
    });
    expect(readFormAnswer({ newIdentity: false }, CANDS)).toEqual({
      kind: 'invalid',
      reason: expect.stringContaining('no candidate was chosen'),
    });
    expect(readFormAnswer({ identity: 'stranger' }, CANDS)).toEqual({
      kind: 'invalid',
      reason: expect.stringContaining('not one of the 2 candidates'),
    });
    expect(readFormAnswer({ identity: ['id-1', 'acc-2'] }, CANDS)).toEqual({
      kind: 'invalid',
      reason: expect.stringContaining('expected one candidate id'),
    });
    expect(readFormAnswer({ identity: 'id-1' }, undefined)).toEqual({
      kind: 'invalid',
      reason: expect.stringContaining('candidate list is missing'),
    });
    expect(readFormAnswer({ newIdentity: 'no' }, CANDS)).toEqual({
      kind: 'invalid',
      reason: expect.stringContaining('"no"'),
    });
  });
});

describe('form naming and content', () => {
  it('keys forms by account id and fusion source, not by display name', () => {
    const a = formName('John Smith', 'LDAP', 'aaa1');
    const b = formName('John Smith', 'LDAP', 'bbb2');
    expect(a).not.toBe(b);
    const desc = formDescription('x', 'fs1');
    expect(accountIdOfForm({ name: a, description: desc }, 'fs1')).toBe('aaa1');
    expect(accountIdOfForm({ name: a, description: desc }, 'other-fusion-source')).toBeUndefined();
    expect(accountIdOfForm({ name: 'Fusion Review - John Smith [LDAP]', description: desc }, 'fs1')).toBeUndefined();
    expect(labelsOfForm(formName('Ann #1 [x]', 'HR', 'k9'))).toEqual({ accountName: 'Ann #1 [x]', sourceName: 'HR' });
    expect(() => formName('A', 'B', 'has space')).toThrow(expect.objectContaining({ code: 'INPUT_INVALID' }));
  });

  it('ranks candidates, details the top K and keeps all of them', () => {
    const cands = candidates(['c1', 'c2', 'c3', 'c4'], (i) => [50, 90, 70, 90][i] as number);
    cands[1] = { ...cands[1]!, candidateKind: 'account' };
    const ranked = rankCandidates(cands).map((c) => c.candidateId);
    expect(ranked).toEqual(['c4', 'c2', 'c3', 'c1']); // ties: identity before account
    const content = buildFormContent(pendingReview({ candidates: cands }), 'fs', 2, new Map());
    expect(content.shown).toBe(2);
    expect(content.description).toContain('Showing 2 of 4 candidates');
    expect(storedCandidates(content.formInput)?.map((c) => c.id)).toEqual(ranked);
    expect(() => buildFormContent(pendingReview({ candidates: [] }), 'fs', 2, new Map())).toThrow(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
    expect(storedCandidates({ candidates: 'not json' })).toBeUndefined();
    expect(storedCandidates({ candidates: '[{"id":1}]' })).toBeUndefined();
  });
});
