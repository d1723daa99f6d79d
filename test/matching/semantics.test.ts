import { FusionError } from '../../src/core/errors';
import {
  type MatchRecord,
  type MatchingSettings,
  buildExhaustiveMatcher,
  buildMatcher,
  parseMatchingSettings,
} from '../../src/core/matching';

const rec = (id: string, attributes: Record<string, unknown>): MatchRecord => ({ id, attributes });

function match(settings: MatchingSettings, baseline: MatchRecord[], accounts: MatchRecord[]) {
  const m = buildMatcher(settings);
  m.addBaseline(baseline);
  const result = m.match(accounts);
  const oracle = buildExhaustiveMatcher(settings);
  oracle.addBaseline(baseline);
  expect([...result.duplicates.entries()]).toEqual([...oracle.match(accounts).duplicates.entries()]);
  return result;
}

const nameAndEmail: MatchingSettings = {
  attributes: [
    { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
    { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false },
    { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: false },
  ],
  reviewTopK: 10,
};

describe('semantics: mandatory attributes AND, at least one attribute passes', () => {
  const identity = rec('i1', { lastName: 'Smith', email: 'john.smith@acme.com', displayName: 'John Smith' });

  it('rejects a pair whose mandatory attribute fails even when others pass (the incumbent ORs them)', () => {
    const r = match(
      nameAndEmail,
      [identity],
      [rec('a1', { lastName: 'Jones', email: 'john.smith@acme.com', displayName: 'John Smith' })],
    );
    expect(r.duplicates.size).toBe(0);
  });

  it('rejects a pair whose mandatory value is missing on the candidate side', () => {
    const m = buildExhaustiveMatcher(nameAndEmail);
    m.addBaseline([rec('i2', { email: 'john.smith@acme.com', displayName: 'John Smith' })]);
    const r = m.match([rec('a1', { lastName: 'Smith', email: 'john.smith@acme.com', displayName: 'John Smith' })]);
    expect(r.duplicates.size).toBe(0);
    expect(r.stats.pairs.value_missing).toBe(1);
  });

  it('an account missing a mandatory value matches nothing and is counted', () => {
    const r = match(nameAndEmail, [identity], [rec('a1', { email: 'john.smith@acme.com', displayName: 'John Smith' })]);
    expect(r.duplicates.size).toBe(0);
    expect(r.stats.accountsMissingMandatory).toBe(1);
  });

  it('a passing mandatory attribute is itself the passing attribute', () => {
    const r = match(
      nameAndEmail,
      [identity],
      [rec('a1', { lastName: 'Smyth', email: 'x@y.org', displayName: 'Peter Smyth' })],
    );
    // the mandatory attribute passes (SM0 = SM0): that is a passing attribute
    expect(r.duplicates.get('a1')).toEqual([
      {
        accountId: 'a1',
        candidateId: 'i1',
        candidateKind: 'identity',
        score: expect.any(Number),
        scores: { lastName: 100, email: expect.any(Number), displayName: 45 },
      },
    ]);
  });

  it('without mandatory attributes every attribute below its threshold means no match', () => {
    const settings: MatchingSettings = {
      attributes: nameAndEmail.attributes.map((a) => ({ ...a, mandatory: false })),
      reviewTopK: 10,
    };
    const r = match(
      settings,
      [identity],
      [rec('a1', { lastName: 'Jones', email: 'peter.jones@other.org', displayName: 'Peter Jones' })],
    );
    expect(r.duplicates.size).toBe(0);
    const ok = match(settings, [identity], [rec('a2', { lastName: 'Jones', email: 'john.smith@acme.com' })]);
    expect(ok.duplicates.get('a2')?.[0]?.scores).toEqual({ lastName: 0, email: 100 });
    expect(ok.duplicates.get('a2')?.[0]?.score).toBe(50); // mean over attributes present on both sides
  });

  it('an account with no comparable attribute never matches (the incumbent matches every identity)', () => {
    const settings: MatchingSettings = {
      attributes: nameAndEmail.attributes.map((a) => ({ ...a, mandatory: false })),
      reviewTopK: 10,
    };
    const baseline = [identity, rec('i2', { displayName: 'Ann Lee' }), rec('i3', {})];
    const r = match(settings, baseline, [rec('a1', { department: 'IT' }), rec('a2', { lastName: '   ', email: null })]);
    expect(r.duplicates.size).toBe(0);
    expect(r.stats.accountsWithoutValues).toBe(2);
    expect(r.stats.pairsCompared).toBe(0);
  });
});

describe('scope: new accounts against the baseline and each other', () => {
  it('reports the later of two same-run accounts as a duplicate of the earlier one only', () => {
    const r = match(
      nameAndEmail,
      [],
      [
        rec('a1', { lastName: 'Smith', displayName: 'Jon Smith' }),
        rec('a2', { lastName: 'Smith', displayName: 'John Smith' }),
        rec('a3', { lastName: 'Smith', displayName: 'John Smith' }),
      ],
    );
    expect(r.duplicates.has('a1')).toBe(false);
    expect(r.duplicates.get('a2')?.map((d) => [d.candidateId, d.candidateKind])).toEqual([['a1', 'account']]);
    expect(r.duplicates.get('a3')?.map((d) => d.candidateId)).toEqual(['a2', 'a1']); // ranked by score
  });

  it('ranks identities before accounts on equal scores and keeps the top K', () => {
    const settings = { ...nameAndEmail, reviewTopK: 2 };
    const baseline = [rec('i1', { lastName: 'Smith' }), rec('i2', { lastName: 'Smith' })];
    const m = buildMatcher(settings);
    m.addBaseline(baseline);
    const r = m.match([rec('a0', { lastName: 'Smith' }), rec('a1', { lastName: 'Smith' })]);
    expect(r.duplicates.get('a1')?.map((d) => d.candidateId)).toEqual(['i1', 'i2']);
    expect(r.stats.truncated).toBe(1);
  });

  it('never matches a record with itself (same id in baseline and accounts)', () => {
    const r = match(nameAndEmail, [rec('x', { lastName: 'Smith' })], [rec('x', { lastName: 'Smith' })]);
    expect(r.duplicates.size).toBe(0);
  });
});

describe('multi-valued attributes', () => {
  it('scores the best value pair', () => {
    const settings: MatchingSettings = {
      attributes: [{ attribute: 'email', algorithm: 'levenshtein', threshold: 90, mandatory: false }],
      reviewTopK: 10,
    };
    const r = match(
      settings,
      [rec('i1', { email: ['old@acme.com', 'jane.doe@acme.com'] })],
      [
        rec('a1', { email: ['jane.doe@acme.co', 'nobody@else.org'] }),
        rec('a2', ['x'] as unknown as Record<string, unknown>),
      ],
    );
    expect(r.duplicates.get('a1')?.[0]?.scores.email).toBe(94.1);
  });
});

describe('stats explain the result', () => {
  it('counts pairs by reason and candidates per account', () => {
    const r = match(
      nameAndEmail,
      [
        rec('i1', { lastName: 'Smith', email: 'a@b.c' }),
        rec('i2', { lastName: 'Smyth' }),
        rec('i3', { lastName: 'Smith', displayName: 'Ann Smith' }),
      ],
      [rec('a1', { lastName: 'Smith', email: 'zzz@q.r', displayName: 'Bob Smith' })],
    );
    expect(r.stats.pairsCompared).toBe(3);
    expect(r.stats.pairs.matched).toBe(3); // the mandatory attribute passes for all three
    expect(r.stats.candidatesMax).toBe(3);
    expect(r.stats.generatorUse).toEqual({ lastName: 1 });
    // With two mandatory attributes the index uses the cheaper one, which already filters the
    // failing pairs; the oracle scores every pair and shows each reason.
    const settings = {
      ...nameAndEmail,
      attributes: [nameAndEmail.attributes[0]!, { ...nameAndEmail.attributes[2]!, mandatory: true }],
    };
    const oracle = buildExhaustiveMatcher(settings);
    oracle.addBaseline([rec('i1', { lastName: 'Smith', displayName: 'Ann Smith' }), rec('i2', { lastName: 'Smith' })]);
    const strict = oracle.match([rec('a1', { lastName: 'Smith', displayName: 'Bob Smith' })]);
    expect(strict.stats.pairs).toEqual({ matched: 0, below_threshold: 0, mandatory_failed: 1, value_missing: 1 });
  });
});

describe('matching configuration', () => {
  const valid = {
    matching: {
      attributes: [{ attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true }],
      reviewTopK: 5,
    },
  };

  it('parses the matching section with defaults', () => {
    expect(parseMatchingSettings(valid)).toEqual({
      attributes: [{ attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true }],
      reviewTopK: 5,
      model: 'rules',
      probabilityThreshold: 0.9,
      maxReviewShare: 0.5,
    });
    expect(
      parseMatchingSettings({ matching: { attributes: [{ attribute: 'a', algorithm: 'exact', threshold: '100' }] } }),
    ).toEqual({
      attributes: [{ attribute: 'a', algorithm: 'exact', threshold: 100, mandatory: false }],
      reviewTopK: 10,
      model: 'rules',
      probabilityThreshold: 0.9,
      maxReviewShare: 0.5,
    });
    expect(parseMatchingSettings({})).toEqual({
      attributes: [],
      reviewTopK: 10,
      model: 'rules',
      probabilityThreshold: 0.9,
      maxReviewShare: 0.5,
    });
  });

  it("reads the incumbent's matchingConfigs", () => {
    expect(
      parseMatchingSettings({
        matchingConfigs: [{ attribute: 'email', algorithm: 'jaro-winkler', fusionScore: 90, mandatory: false }],
      }).attributes,
    ).toEqual([{ attribute: 'email', algorithm: 'jaro-winkler', threshold: 90, mandatory: false }]);
  });

  const bad: [string, unknown, RegExp][] = [
    ['section not an object', { matching: [] }, /matching = \[\].*an object/],
    ['attributes not an array', { matching: { attributes: {} } }, /matching.attributes/],
    [
      'unknown algorithm',
      { matching: { attributes: [{ attribute: 'a', algorithm: 'lig3', threshold: 80 }] } },
      /matching.attributes\[0\].algorithm = "lig3".*name-matcher, levenshtein/,
    ],
    [
      'threshold above 100',
      { matching: { attributes: [{ attribute: 'a', algorithm: 'dice', threshold: 101 }] } },
      /threshold = 101.*0 to 100/,
    ],
    ['threshold missing', { matching: { attributes: [{ attribute: 'a', algorithm: 'dice' }] } }, /threshold.*0 to 100/],
    [
      'empty attribute',
      { matching: { attributes: [{ attribute: ' ', algorithm: 'dice', threshold: 1 }] } },
      /attribute = " "/,
    ],
    [
      'mandatory not boolean',
      { matching: { attributes: [{ attribute: 'a', algorithm: 'dice', threshold: 1, mandatory: 'yes' }] } },
      /mandatory = "yes".*true or false/,
    ],
    [
      'duplicate attribute',
      {
        matching: {
          attributes: [
            { attribute: 'a', algorithm: 'dice', threshold: 1 },
            { attribute: 'a', algorithm: 'exact', threshold: 1 },
          ],
        },
      },
      /attributes\[1\].attribute.*at most once/,
    ],
    ['reviewTopK 0', { matching: { attributes: [], reviewTopK: 0 } }, /reviewTopK = 0.*1 to 1000/],
    [
      'incumbent threshold out of range',
      { matchingConfigs: [{ attribute: 'a', algorithm: 'dice', fusionScore: -1 }] },
      /matchingConfigs\[0\].fusionScore = -1/,
    ],
  ];
  it.each(bad)(
    'rejects %s with MATCHING_INVALID naming field, value and what is allowed',
    (_label, config, message) => {
      let error: unknown;
      try {
        parseMatchingSettings(config as Record<string, unknown>);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(FusionError);
      expect((error as FusionError).code).toBe('MATCHING_INVALID');
      expect((error as FusionError).message).toMatch(message);
    },
  );
});

describe('metrics', () => {
  it('exports pairs by reason, full scans and candidates per account', async () => {
    const { registry } = await import('../../src/observability/metrics-registry');
    const { METRIC } = await import('../../src/observability/metric-names');
    const settings: MatchingSettings = {
      attributes: [{ attribute: 'n', algorithm: 'exact', threshold: 0, mandatory: false }],
      reviewTopK: 10,
    };
    const m = buildMatcher(settings);
    m.addBaseline([rec('i1', { n: 'x' })]);
    m.match([rec('a1', { n: 'y' })]);
    expect(await registry.getSingleMetricAsString(METRIC.matchingPairs)).toMatch(
      /fusion_matching_pairs_total\{reason="matched"\} \d+/,
    );
    expect(await registry.getSingleMetricAsString(METRIC.matchingFullScans)).toMatch(/algorithm="exact"\} [1-9]/);
    expect(await registry.getSingleMetricAsString(METRIC.matchingCandidates)).toMatch(/attribute_algorithm="exact"/);
  });
});

describe('matching model settings', () => {
  const rule = { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 };
  it('reads model and probabilityThreshold', () => {
    const s = parseMatchingSettings({
      matching: { attributes: [rule], model: 'probabilistic', probabilityThreshold: 0.8 },
    });
    expect(s.model).toBe('probabilistic');
    expect(s.probabilityThreshold).toBe(0.8);
  });
  it.each([
    [{ model: 'fuzzy' }, 'matching.model'],
    [{ probabilityThreshold: 1 }, 'matching.probabilityThreshold'],
    [{ probabilityThreshold: '0.5' }, 'matching.probabilityThreshold'],
  ])('rejects %j naming %s', (extra, field) => {
    expect(() => parseMatchingSettings({ matching: { attributes: [rule], ...extra } })).toThrow(field);
  });
});
