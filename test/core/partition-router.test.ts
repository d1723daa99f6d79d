/**
 * The partition router's promise, checked against a simulation of the partitions' holdings: every
 * record an account shares a key with (the baseline, accounts of earlier batches and those before it
 * in its batch) is held by the partition deciding it, once the batch's moves are applied, whatever
 * the keys (bridges between classes in different partitions, several moves in one batch, accounts
 * without a key). A partition that gets back a class it held keeps one copy of each record.
 */
import { DerivedKeys } from '../../src/core/aggregation/derived-key';
import { decodeFound, foundAttributes } from '../../src/core/aggregation/found-columns';
import { PartitionDecider, type BatchDecisions } from '../../src/core/aggregation/partition-decisions';
import { PartitionRouter } from '../../src/core/aggregation/partition-router';
import type { MatchRecord, PotentialDuplicate } from '../../src/core/matching/types';
import { MAIN_SETTINGS } from '../../bench/matching-data';

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 0 to 3 keys out of `alphabet`: mostly one, sometimes two (a bridge), some none. */
function keysOf(next: () => number, alphabet: number): string[] {
  const u = next();
  const count = u < 0.05 ? 0 : u < 0.8 ? 1 : u < 0.97 ? 2 : 3;
  return Array.from({ length: count }, () => `k${Math.floor(next() * alphabet)}`);
}

function simulate(seed: number, parts: number, alphabet: number, baselineSize: number, batches: number) {
  const next = random(seed);
  const keys: string[][] = [];
  const baseline = Array.from({ length: baselineSize }, () => keysOf(next, alphabet));
  keys.push(...baseline);
  const router = new PartitionRouter(parts, baseline);
  const held = Array.from({ length: parts }, () => new Set<number>());
  baseline.forEach((_, r) => {
    const p = router.baselinePartitionOf[r]!;
    if (baseline[r]!.length === 0) expect(p).toBe(-1);
    else held[p]!.add(r);
  });
  let moves = 0;
  let missing = 0;
  for (let b = 0; b < batches; b++) {
    const batch = Array.from({ length: 1 + Math.floor(next() * 40) }, () => keysOf(next, alphabet));
    const routed = router.route(batch);
    // Moves carry what the sending partition held as the batch started.
    const sent = routed.moves.map((m) => ({
      to: m.to,
      records: [...held[m.from]!].filter((r) => keys[r]!.some((k) => m.keys.includes(k))),
    }));
    for (const s of sent) for (const r of s.records) held[s.to]!.add(r);
    moves += routed.moves.length;
    batch.forEach((k, i) => {
      const p = routed.partitionOf[i]!;
      const r = keys.push(k) - 1;
      for (let other = 0; other < r; other++)
        if (keys[other]!.some((x) => k.includes(x)) && !held[p]!.has(other)) missing++;
      held[p]!.add(r);
    });
  }
  return { missing, moves };
}

describe('partition router', () => {
  for (const [seed, parts, alphabet, baselineSize] of [
    [1, 2, 60, 200],
    [2, 3, 150, 400],
    [3, 5, 400, 300],
    [4, 4, 40, 0],
  ] as const) {
    it(`seed ${seed}, ${parts} partitions, ${alphabet} keys, ${baselineSize} baseline records: every record an account shares a key with is in its partition`, () => {
      const { missing, moves } = simulate(seed, parts, alphabet, baselineSize, 60);
      expect(missing).toBe(0);
      // The keys are chosen so that classes bridge often enough to move.
      expect(moves).toBeGreaterThan(3);
    });
  }

  it('packs the baseline classes evenly and sends a class with no key nowhere', () => {
    const baseline = [...Array.from({ length: 300 }, (_, r) => [`s${r % 30}`]), []];
    const router = new PartitionRouter(3, baseline);
    expect(router.baselinePartitionOf.at(-1)).toBe(-1);
    expect(router.loads).toEqual([100, 100, 100]);
    // A class's records share its partition.
    for (let r = 30; r < 300; r++) expect(router.baselinePartitionOf[r]).toBe(router.baselinePartitionOf[r % 30]);
    // A new key goes to the least loaded partition; an account with no key too.
    const { partitionOf, moves } = router.route([['new'], [], ['s0']]);
    expect(moves).toEqual([]);
    expect([...partitionOf]).toEqual([0, 1, router.baselinePartitionOf[0]]);
  });

  it('a bridge moves the smaller class to the larger one\u2019s partition, with its keys as the batch started', () => {
    const baseline = [['a'], ['a'], ['a'], ['b'], ['b2', 'b']];
    const router = new PartitionRouter(2, baseline);
    const [pa, pb] = [router.baselinePartitionOf[0]!, router.baselinePartitionOf[3]!];
    expect(pa).not.toBe(pb);
    const { partitionOf, moves } = router.route([['b', 'a'], ['b2']]);
    expect(moves).toEqual([{ from: pb, to: pa, keys: ['b2', 'b'] }]);
    expect([...partitionOf]).toEqual([pa, pa]);
    expect(router.moved).toEqual({ classes: 1, keys: 2 });
  });
});

describe('partition decider', () => {
  const attributes = foundAttributes(MAIN_SETTINGS);
  const person = (id: string, lastName: string): MatchRecord => ({
    id,
    attributes: { lastName, displayName: `Ann ${lastName}`, email: `ann.${lastName}@example.com`.toLowerCase() },
  });

  it('moves out what it held as the batch started, waits for what moves in, and holds a record back once', () => {
    const decided: BatchDecisions[] = [];
    const sent: { to: number; batch: number; records: MatchRecord[] }[] = [];
    const decider = new PartitionDecider(
      {
        settings: MAIN_SETTINGS,
        namespace: new DerivedKeys().namespaceId,
        attribute: 'lastName',
        baseline: [person('i1', 'Smith'), person('i2', 'Jones')],
      },
      { decided: (d) => decided.push(d), exported: (to, batch, records) => sent.push({ to, batch, records }) },
    );
    const smithKeys = ['SM0', 'XMT'];
    decider.take({ batch: 0, accounts: [], exports: [{ to: 1, keys: smithKeys }], imports: 1 });
    // Sent at once; the batch waits for its import.
    expect(sent.map((s) => [s.to, s.batch, s.records.map((r) => r.id)])).toEqual([[1, 0, ['i1']]]);
    expect(decided).toEqual([]);
    // The class comes back with a record this partition holds already, and one it does not.
    decider.import(0, [person('i1', 'Smith'), person('i3', 'Smyth')]);
    expect(decided.map((d) => d.batch)).toEqual([0]);
    decider.take({ batch: 1, accounts: [person('a1', 'Smith')], exports: [], imports: 0 });
    const found = new Map<string, PotentialDuplicate[]>();
    decodeFound(decided[1]!.found, attributes, (id, list) => found.set(id, list));
    expect(
      found
        .get('a1')
        ?.map((c) => c.candidateId)
        .sort(),
    ).toEqual(['i1', 'i3']);
  });
});
