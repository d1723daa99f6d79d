import type { ReviewCandidate } from '../../src/core/ports/review-queue';
import { readFormAnswer } from '../../src/core/review/form-answer';
import { buildFormContent, storedCandidates } from '../../src/core/review/form-content';
import { type Harness, candidates, pendingReview, submitAndSend, uid, useReviewSimulator } from './support';

interface Section {
  id: string;
  config: {
    label: string;
    description?: string;
    formElements: Array<{ key: string; config: Record<string, unknown> }>;
  };
}

/** Probabilistic candidates as the matcher reports them (score = probability x 100, one decimal). */
function probabilistic(): ReviewCandidate[] {
  const c = (id: string, probability: number, explanation: ReviewCandidate['explanation']): ReviewCandidate => ({
    candidateId: id,
    candidateKind: 'identity',
    score: Math.round(probability * 1000) / 10,
    scores: { email: 100, lastName: 0 },
    probability,
    matchWeight: (explanation ?? []).reduce((s, e) => s + e.weight, 0),
    explanation,
  });
  return [
    // Same score once rounded (99.9): only the probability ranks them.
    c('namesake', 0.9991, [
      { attribute: 'email', level: 'exact', weight: 9.84 },
      { attribute: 'lastName', level: 'different', weight: -4.06 },
    ]),
    c('best', 0.99996, [
      { attribute: 'email', level: 'exact', weight: 9.84 },
      { attribute: 'lastName', level: 'exact', weight: 6.2 },
      { attribute: 'employeeNumber', level: 'missing', weight: 0 },
    ]),
    c('weak', 0.42, [{ attribute: 'email', level: 'fuzzy >= 0.92', weight: 2.5 }]),
  ];
}

describe('review forms of the probabilistic model explain each candidate', () => {
  const review = pendingReview({ candidates: probabilistic() });
  const details = new Map([['best', { name: 'Ann Lee', attributes: { email: 'ann@x.org', lastName: 'Lee' } }]]);
  const content = buildFormContent(review, 'fs', 2, details);
  const sections = content.formElements as unknown as Section[];

  it('ranks by probability, finer than the rounded score', () => {
    expect(content.ranked.map((c) => c.candidateId)).toEqual(['best', 'namesake', 'weak']);
  });

  it('shows the probability and, per attribute, the level and weight', () => {
    const top = sections.find((s) => s.id === 'candidates')!.config.formElements as unknown as Section[];
    expect(top.map((s) => s.config.label)).toEqual([
      '#1 Ann Lee (identity best), probability >99.9%',
      '#2 identity namesake, probability 99.9%',
    ]);
    expect(top[0]!.config.description).toBe(
      'Match probability >99.9% (match weight +16.0; email: exact, +9.8; lastName: exact, +6.2; employeeNumber: missing, 0)',
    );
    expect(top[1]!.config.formElements.map((f) => [f.config.label, f.config.default])).toEqual([
      ['email (exact, +9.8)', '(not available)'],
      ['lastName (different, -4.1)', '(not available)'],
    ]);
    expect(top[0]!.config.formElements.map((f) => [f.config.label, f.config.default])).toEqual([
      ['email (exact, +9.8)', 'ann@x.org'],
      ['lastName (exact, +6.2)', 'Lee'],
      ['employeeNumber (missing, 0)', '(not available)'],
    ]);
    const all = sections.find((s) => s.id === 'allCandidates')!.config.formElements[0]!.config.default as string;
    expect(all.split('\n')).toEqual([
      '1. Ann Lee (identity best), probability >99.9% [email: exact, +9.8; lastName: exact, +6.2; employeeNumber: missing, 0]',
      '2. identity namesake, probability 99.9% [email: exact, +9.8; lastName: different, -4.1]',
      '3. identity weak, probability 42.0% [email: fuzzy >= 0.92, +2.5]',
    ]);
  });

  it('stores probability and explanation with each candidate, and the next run validates an answer against them', () => {
    const stored = storedCandidates(content.formInput)!;
    expect(stored.map((c) => [c.id, c.probability])).toEqual([
      ['best', 0.99996],
      ['namesake', 0.9991],
      ['weak', 0.42],
    ]);
    expect(stored[1]!.explanation).toEqual(probabilistic()[0]!.explanation);
    expect(readFormAnswer({ identity: 'namesake' }, stored)).toEqual({
      kind: 'link',
      identityId: 'namesake',
      candidateKind: 'identity',
    });
    expect(readFormAnswer({ identity: 'someone-else' }, stored)).toMatchObject({ kind: 'invalid' });
    // A renewed form says the same: see "a renewed form (expired, sent again) keeps the explanation".
  });

  it('shows the prior as its own line, so that the listed weights add up to the match weight', () => {
    const explanation = [
      { attribute: 'email', level: 'exact', weight: 9.84 },
      { attribute: 'lastName', level: 'exact', weight: 6.2 },
      { attribute: 'prior', level: 'share of matches', weight: -11.5 },
    ];
    const candidate: ReviewCandidate = {
      candidateId: 'p',
      candidateKind: 'identity',
      score: 93.5,
      scores: { email: 100, lastName: 100 },
      probability: 0.935,
      matchWeight: 4.54,
      explanation,
    };
    const form = buildFormContent(pendingReview({ candidates: [candidate] }), 'fs', 1, new Map());
    const top = (form.formElements as unknown as Section[]).find((s) => s.id === 'candidates')!.config
      .formElements as unknown as Section[];
    expect(top[0]!.config.description).toBe(
      'Match probability 93.5% (match weight +4.5; email: exact, +9.8; lastName: exact, +6.2; prior: share of matches, -11.5)',
    );
    expect(top[0]!.config.formElements.map((f) => [f.config.label, f.config.default])).toEqual([
      ['email (exact, +9.8)', '(not available)'],
      ['lastName (exact, +6.2)', '(not available)'],
      ['prior (share of matches, -11.5)', 'odds of a match before any attribute is compared'],
    ]);
    expect(explanation.reduce((t, e) => t + e.weight, 0)).toBeCloseTo(candidate.matchWeight!, 2);
  });

  it('drops a malformed stored explanation but keeps the candidate', () => {
    const raw = JSON.stringify([
      { id: 'a', kind: 'identity', score: 90, scores: {}, probability: 0.9, explanation: [{ attribute: 'email' }] },
    ]);
    expect(storedCandidates({ candidates: raw })).toEqual([
      { id: 'a', kind: 'identity', score: 90, scores: {}, probability: 0.9 },
    ]);
  });
});

describe('review forms of the rules model are unchanged', () => {
  it('scores per attribute, ranked by score, nothing probabilistic stored', () => {
    const content = buildFormContent(pendingReview({ candidates: candidates(['x', 'y']) }), 'fs', 1, new Map());
    const sections = content.formElements as unknown as Section[];
    const top = sections.find((s) => s.id === 'candidates')!.config.formElements as unknown as Section[];
    expect(top[0]!.config.label).toBe('#1 identity x, score 99');
    expect(top[0]!.config.description).toBeUndefined();
    expect(top[0]!.config.formElements.map((f) => f.config.label)).toEqual([
      'email (score 100)',
      'displayName (score 99)',
    ]);
    expect(JSON.parse(content.formInput.candidates!)).toEqual([
      { id: 'x', kind: 'identity', score: 99, scores: { email: 100, displayName: 99 } },
      { id: 'y', kind: 'identity', score: 98.9, scores: { email: 100, displayName: 98.9 } },
    ]);
  });
});

describe('a probabilistic review form on the simulator', () => {
  let h: Harness;
  useReviewSimulator((x) => (h = x));

  it('the created form explains its candidates, its instance keeps them, and the notification says the same', async () => {
    const review = pendingReview({ candidates: probabilistic() });
    const { queue } = h.queue(uid('fs'));
    await submitAndSend(queue, review);
    const all = JSON.stringify(h.onlyInstance(review.accountId)['formElements']);
    expect(all).toContain('identity best, probability >99.9%');
    expect(all).toContain('email: exact, +9.8; lastName: different, -4.1');
    const input = h.onlyInstance(review.accountId)['formInput'] as Record<string, string>;
    expect(storedCandidates(input)?.map((c) => [c.id, c.explanation?.length])).toEqual([
      ['best', 3],
      ['namesake', 2],
      ['weak', 1],
    ]);
    const [run] = h.runsFor(review.accountId);
    expect(run?.body).toContain(
      'probability >99.9% [email: exact, +9.8; lastName: exact, +6.2; employeeNumber: missing, 0]',
    );
  });

  it('a renewed form (expired, sent again) keeps the explanation in its input and its notification', async () => {
    const fs = uid('fs');
    const review = pendingReview({ candidates: probabilistic() });
    await submitAndSend(h.queue(fs).queue, review);
    expect(h.sim.control.expireFormInstances([String(h.onlyInstance(review.accountId)['id'])])).toBe(1);

    const run2 = h.queue(fs).queue;
    const decision = (await run2.readDecisions()).get(review.accountId);
    await run2.send();
    expect(decision).toMatchObject({ kind: 'expired', renewed: true });
    const renewed = h.instancesOf(review.accountId)[1]!;
    const input = renewed['formInput'] as Record<string, string>;
    expect(input['round']).toBe('2');
    expect(storedCandidates(input)?.find((c) => c.id === 'namesake')?.explanation).toEqual(
      probabilistic()[0]!.explanation,
    );
    const runs = h.runsFor(review.accountId);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.body).toContain('sent again');
    expect(runs[1]!.body).toContain(
      'probability >99.9% [email: exact, +9.8; lastName: exact, +6.2; employeeNumber: missing, 0]',
    );
    expect(runs[1]!.body).toContain(
      'identity namesake, probability 99.9% [email: exact, +9.8; lastName: different, -4.1]',
    );
  });
});
