/**
 * The keys of runs decided in partitions across worker processes: one key space per partition queue
 * (prefix and name), the run id the hash tag of every key (one cluster slot per run, as the Lua
 * scripts need), and job data checked before anything is read with it.
 */
import { UnrecoverableError } from 'bullmq';
import { partitionKeys, partitionSpace, readPartitionJobData } from '../../src/queue/partition-keys';

/** The part of a key Redis Cluster hashes: the first {...} with something inside. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

const RUN = '0b6c2f7e-58a1-4c3e-9d2a-51d1f1b0c001';

function all(space: string): string[] {
  const k = partitionKeys(space, RUN);
  return [k.meta, k.outbound, k.inbound(0), k.inbound(7), k.claim(0), k.claim(7)];
}

it('two deployments sharing a Redis (other prefix or queue) never share a key of the same run', () => {
  const a = all(partitionSpace('bull', 'fusion-commands-partitions'));
  const b = all(partitionSpace('bull', 'tenant-b-partitions'));
  const c = all(partitionSpace('other', 'fusion-commands-partitions'));
  // A cluster's prefix in braces is another BullMQ queue than the same name without.
  const d = all(partitionSpace('{bull}', 'fusion-commands-partitions'));
  expect(new Set([...a, ...b, ...c, ...d]).size).toBe(a.length * 4);
});

it("the run id is every key's hash tag, even under a cluster prefix in braces", () => {
  for (const prefix of ['bull', '{bull}', 'a{b}c'])
    for (const key of all(partitionSpace(prefix, 'q{x}'))) expect(hashTag(key)).toBe(RUN);
});

it.each([
  null,
  'x',
  {},
  { runId: RUN },
  { runId: 'a b', part: 0 },
  { runId: RUN, part: -1 },
  { runId: RUN, part: 1.5 },
])('job data %p is refused for good (a retry would read the same)', (data) => {
  expect(() => readPartitionJobData(data)).toThrow(UnrecoverableError);
});

it('well-formed job data is read as it is; a job of an earlier release, without its size, as an empty partition', () => {
  expect(readPartitionJobData({ runId: RUN, part: 3, records: 5_000 })).toEqual({
    runId: RUN,
    part: 3,
    records: 5_000,
  });
  expect(readPartitionJobData({ runId: RUN, part: 3 })).toEqual({ runId: RUN, part: 3, records: 0 });
});
