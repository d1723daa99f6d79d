/**
 * The wire form of a partition's found duplicates: what the run rebuilds is what the partition's
 * matcher found, to the order of each review's candidates and of their per-attribute scores (the form's
 * JSON keeps both).
 */
import { decodeFound, encodeFound, foundAttributes } from '../../src/core/aggregation/found-columns';
import { buildMatcher } from '../../src/core/matching';
import type { PotentialDuplicate } from '../../src/core/matching/types';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';

const attributes = foundAttributes(MAIN_SETTINGS);

function roundTrip(found: [string, PotentialDuplicate[]][]): [string, PotentialDuplicate[]][] {
  const back: [string, PotentialDuplicate[]][] = [];
  // Through the structured clone, as a thread's message.
  decodeFound(structuredClone(encodeFound(found, attributes)), attributes, (id, list) => back.push([id, list]));
  return back;
}

describe('found duplicates by column', () => {
  it("gives back a real matcher's findings byte for byte: candidates, kinds, scores and their keys in order", () => {
    const { identities, accounts } = generate(7, 300, 300);
    const m = buildMatcher(MAIN_SETTINGS);
    m.addBaseline(identities);
    // Accounts the run created join as connector accounts: candidates of both kinds.
    m.addBaseline(accounts.slice(0, 100).map((a) => ({ ...a, id: `key-${a.id}` })));
    const { duplicates } = m.match(accounts.slice(100), { topK: Number.POSITIVE_INFINITY });
    const found = [...duplicates];
    expect(found.length).toBeGreaterThan(20);
    expect(found.some(([, l]) => l.length > 1)).toBe(true);
    expect(JSON.stringify(roundTrip(found))).toBe(JSON.stringify(found));
  });

  it('keeps accounts without a score on some attribute, connector-account candidates and an empty batch', () => {
    const found: [string, PotentialDuplicate[]][] = [
      [
        'a1',
        [
          {
            accountId: 'a1',
            candidateId: 'i9',
            candidateKind: 'identity',
            score: 90,
            scores: { lastName: 100, displayName: 80 },
          },
          { accountId: 'a1', candidateId: 'k2', candidateKind: 'account', score: 85.5, scores: { email: 85.5 } },
        ],
      ],
      ['a2', [{ accountId: 'a2', candidateId: 'i1', candidateKind: 'identity', score: 0, scores: {} }]],
    ];
    expect(JSON.stringify(roundTrip(found))).toBe(JSON.stringify(found));
    expect(roundTrip([])).toEqual([]);
  });

  it("carries each candidate's directory row where the partition knows it, and none where it does not", () => {
    const found: [string, PotentialDuplicate[]][] = [
      [
        'a1',
        [
          { accountId: 'a1', candidateId: 'i9', candidateKind: 'identity', score: 90, scores: { lastName: 100 } },
          { accountId: 'a1', candidateId: 'k2', candidateKind: 'account', score: 85, scores: { email: 85 } },
          { accountId: 'a1', candidateId: 'i0', candidateKind: 'identity', score: 80, scores: { email: 80 } },
        ],
      ],
    ];
    const rows = new Map([
      ['i9', 41],
      ['i0', 0],
    ]);
    const back: PotentialDuplicate[] = [];
    const cols = structuredClone(encodeFound(found, attributes, (id) => rows.get(id)));
    decodeFound(cols, attributes, (_id, list) => back.push(...list));
    expect(back.map((d) => d.ref)).toEqual([41, undefined, 0]);
    // Without a row the candidate is as the matcher built it (no ref key at all).
    expect('ref' in back[1]!).toBe(false);
    expect(back.map(({ ref: _ref, ...d }) => d)).toEqual(found[0]![1]);
  });

  it('refuses a probabilistic duplicate (partitions decide rules runs only) and a kind it cannot carry', () => {
    const d: PotentialDuplicate = {
      accountId: 'a',
      candidateId: 'i',
      candidateKind: 'identity',
      score: 1,
      scores: {},
      probability: 0.9,
    };
    expect(() => encodeFound([['a', [d]]], attributes)).toThrow(/probabilistic/);
    const strange = { ...d, probability: undefined, candidateKind: 'group' } as unknown as PotentialDuplicate;
    expect(() => encodeFound([['a', [strange]]], attributes)).toThrow(/unknown kind group/);
  });
});
