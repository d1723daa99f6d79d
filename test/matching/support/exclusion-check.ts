import type { MatchingSettings } from '../../../src/core/matching';
import type { BlockedSlice } from '../../../src/core/matching/blocked-slice';
import { encodeRecords } from '../../../src/core/matching/parallel/record-columns';
import type { Shard } from '../../../src/core/matching/parallel/shard';
import { randomRecords } from './random-records';

const pairs = (s: BlockedSlice): number => s.outcomes.reduce((a, b) => a + b, 0);

/** Per account k, its matched candidates with their scores: "record:score,score;..." */
function candidatesOf(s: BlockedSlice, k: number, attributes: number, keep: (c: number) => boolean): string {
  const out: string[] = [];
  for (let m = s.matchedStart[k]!; m < s.matchedStart[k + 1]!; m++) {
    if (!keep(s.candidates[m]!)) continue;
    out.push(`${s.candidates[m]}:${[...s.scores.subarray(m * attributes, (m + 1) * attributes)].join(',')}`);
  }
  return out.join(';');
}

/**
 * A shard holding 800 records blocks its records 400..799 ahead (each against those before it),
 * then is told to exclude every other record that was a candidate, then blocks them again: the
 * excluded records are no candidate any more, every other candidate is the same with the same
 * scores, and fewer pairs were scored. Returns the pairs scored before and after.
 */
export async function checkExclusion(shard: Shard, settings: MatchingSettings): Promise<[number, number]> {
  const records = randomRecords(2029, 800, ['a', 'b', 'c'], 'f');
  let key = 0;
  shard.addBaseline(encodeRecords(records, settings.attributes, () => key++));
  const before = await shard.blockHeld(400, 800);
  const chosen = new Set<number>();
  for (const c of before.candidates) if (c % 2 === 1) chosen.add(c);
  expect(chosen.size).toBeGreaterThan(10);
  shard.exclude(Int32Array.from(chosen));
  const after = await shard.blockHeld(400, 800);
  const A = settings.attributes.length;
  for (let k = 0; k < 400; k++) {
    expect(after.status[k]).toBe(before.status[k]);
    expect(after.compared[k]).toBeLessThanOrEqual(before.compared[k]!);
    expect(candidatesOf(after, k, A, () => true)).toBe(candidatesOf(before, k, A, (c) => !chosen.has(c)));
  }
  expect(pairs(after)).toBeLessThan(pairs(before));
  return [pairs(before), pairs(after)];
}
