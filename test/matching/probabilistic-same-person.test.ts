import { type MatchRecord, type ModelParameters, buildMatcher, parseMatchingSettings } from '../../src/core/matching';
import { comparatorOfKind } from '../../src/core/matching/probabilistic/comparators';
import type { AttributeKind } from '../../src/core/matching/types';

const SETTINGS = parseMatchingSettings({
  matching: {
    model: 'probabilistic',
    attributes: [
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
      { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100, kind: 'identifier' },
      { attribute: 'email', algorithm: 'exact', threshold: 100, kind: 'email' },
    ],
  },
});

/** Given parameters: exact agreement m 0.9 (u 1e-6 for the identifiers), everything else no evidence. */
function parameters(): ModelParameters {
  const kinds: Array<[string, AttributeKind]> = [
    ['displayName', 'name'],
    ['employeeNumber', 'identifier'],
    ['email', 'email'],
  ];
  return {
    version: 1,
    estimatedAt: '2026-11-28T00:00:00.000Z',
    records: 0,
    prior: 0.8,
    attributes: kinds.map(([attribute, kind]) => {
      const levels = comparatorOfKind(kind).levels;
      const rest = 0.1 / (levels.length - 1);
      return {
        attribute,
        levels: levels.map((level, l) => ({ level, m: l === 0 ? 0.9 : rest, u: l === 0 ? 1e-6 : rest })),
      };
    }),
  };
}

const filler: MatchRecord[] = Array.from({ length: 30 }, (_, i) => ({
  id: `id-f${i}`,
  attributes: { displayName: `Person${String.fromCharCode(97 + (i % 26))}${i} Other${i}` },
}));

/**
 * Records of one person do not split an account's belief as if they were two people: an account of
 * the call that links to an identity more likely than not stands for that identity's person, whatever
 * the reviewer's threshold. Here acc-a links to id-1 on the name alone (between 0.5 and the 0.9
 * threshold, so no form), and acc-b holds id-1's employee number and acc-a's address: two strong
 * links to one person. Counted as two people, each would get about half of acc-b's belief.
 */
describe('probabilistic model: records of one person do not compete', () => {
  it('a later account keeps its full belief in both records of a person linked at 0.5-0.9', () => {
    const m = buildMatcher(SETTINGS, { parameters: parameters() });
    m.addBaseline([...filler, { id: 'id-1', attributes: { displayName: 'Jane Doe', employeeNumber: '100' } }]);
    const result = m.match(
      [
        { id: 'acc-a', attributes: { displayName: 'Jane Doe', email: 'jane@corp.example' } },
        { id: 'acc-b', attributes: { displayName: 'Jane Doe', employeeNumber: '100', email: 'jane@corp.example' } },
      ],
      { topK: Infinity },
    );
    // acc-a: no form (below 0.9), though more likely than not the same person.
    expect(result.duplicates.has('acc-a')).toBe(false);
    const b = result.duplicates.get('acc-b') ?? [];
    expect(b.map((d) => d.candidateId).sort()).toEqual(['acc-a', 'id-1']);
    for (const d of b) expect(d.probability).toBeGreaterThan(0.99);

    // The link itself lies between 0.5 and the threshold (what makes acc-a stand for id-1's person).
    const low = buildMatcher(parseMatchingSettings({ matching: { ...SETTINGS, probabilityThreshold: 0.01 } }), {
      parameters: parameters(),
    });
    low.addBaseline([...filler, { id: 'id-1', attributes: { displayName: 'Jane Doe', employeeNumber: '100' } }]);
    const a = low.match([{ id: 'acc-a', attributes: { displayName: 'Jane Doe', email: 'jane@corp.example' } }]);
    const p = a.duplicates.get('acc-a')?.[0]?.probability ?? 0;
    expect(p).toBeGreaterThan(0.5);
    expect(p).toBeLessThan(0.9);
  });
});
