/**
 * Partitions of a run's new accounts, decided before any matching, that keep every pair of accounts
 * that may be duplicates of each other in one partition (issue 27's partitioned run). A pair can only
 * match when it passes every mandatory attribute, and a mandatory attribute whose blocking keys are
 * lossless (Double Metaphone, exact) passes only pairs that share a key. So accounts joined over
 * shared keys (an account's keys join their classes: a surname with two codes, several values) have no
 * potential duplicate outside their class, and whole classes are packed into the partitions.
 *
 * Without such an attribute there is no plan: fuzzy indexes chain different people into one giant
 * component (bench:partitions: 84-100 % of the accounts), and partitions must exchange candidates.
 */
import { matchingRuntime } from './engine-records';
import { KeyIndex } from './indexes/key-index';
import type { MatchRecord, MatchingSettings } from './types';

export interface PartitionPlan {
  /** The mandatory attribute whose key classes partition the accounts. */
  attribute: string;
  /** Each record's partition (0 .. parts-1), in the order given. */
  partitionOf: Int32Array;
  /** Records per partition. */
  sizes: number[];
  /** Records in the largest class: no plan by this attribute can put fewer in one partition. */
  largestClass: number;
}

/** Each record's class: records that share a key, directly or through others, share a class. */
function keyClasses(index: KeyIndex<unknown>, count: number): Int32Array {
  const classOfKey = new Map<string, number>();
  const parent: number[] = [];
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  const classes = new Int32Array(count);
  for (let r = 0; r < count; r++) {
    let root = -1;
    for (const k of index.keysOf(r)) {
      let c = classOfKey.get(k);
      if (c === undefined) {
        c = parent.length;
        parent.push(c);
        classOfKey.set(k, c);
      }
      if (root < 0) root = find(c);
      else parent[find(c)] = root;
    }
    // No value, no key: the mandatory attribute cannot pass, so the record is a class of its own.
    if (root < 0) parent.push((root = parent.length));
    classes[r] = root;
  }
  for (let r = 0; r < count; r++) classes[r] = find(classes[r]!);
  return classes;
}

/** Classes largest first, each into the least loaded partition (ties: the lowest number). */
function pack(classes: Int32Array, parts: number): Omit<PartitionPlan, 'attribute'> {
  const size = new Map<number, number>();
  for (const c of classes) size.set(c, (size.get(c) ?? 0) + 1);
  const order = [...size].sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  const sizes = new Array<number>(parts).fill(0);
  const partOfClass = new Map<number, number>();
  for (const [c, n] of order) {
    let least = 0;
    for (let q = 1; q < parts; q++) if (sizes[q]! < sizes[least]!) least = q;
    sizes[least]! += n;
    partOfClass.set(c, least);
  }
  return {
    partitionOf: classes.map((c) => partOfClass.get(c)!),
    sizes,
    largestClass: order[0]?.[1] ?? 0,
  };
}

/**
 * The plan over `records` in `parts` partitions, by the eligible mandatory attribute whose largest
 * class is the smallest; undefined when no mandatory attribute has lossless keys.
 */
export function planPartitions(
  settings: MatchingSettings,
  records: readonly MatchRecord[],
  parts: number,
): PartitionPlan | undefined {
  if (!Number.isInteger(parts) || parts < 1) throw new RangeError(`partitions must be a whole number >= 1: ${parts}`);
  let best: PartitionPlan | undefined;
  for (const rule of settings.attributes) {
    if (!rule.mandatory) continue;
    const runtime = matchingRuntime(rule, settings.model === 'probabilistic');
    const index = runtime.index();
    if (!(index instanceof KeyIndex) || !index.lossless) continue;
    runtime.append(records);
    const plan = { attribute: rule.attribute, ...pack(keyClasses(index, records.length), parts) };
    if (!best || plan.largestClass < best.largestClass) best = plan;
  }
  return best;
}
