/**
 * Partitions of a run's new accounts, decided before any matching, that keep every pair of accounts
 * that may be duplicates of each other in one partition (issue 27's partitioned run). A pair can only
 * match when it passes every mandatory attribute, and a mandatory attribute whose blocking keys are
 * lossless (Double Metaphone, exact) passes only pairs that share a key. So accounts joined over
 * shared keys (an account's keys join their classes: a surname with two codes, several values) have no
 * potential duplicate outside their class, and whole classes are packed into the partitions. A class
 * heavier than a partition's share stays whole here (bench:partitions: an HR set's Nguyen class holds a
 * quarter of the candidate pairs); a run would split its accounts over partitions sharing its records.
 * The plan keeps together the pairs that can pass the mandatory attributes; a partitioned run gives a
 * sequential run's decisions only if its partitions share the run-wide state as well (the probabilistic
 * model's parameters and its weak-attribute statistics, the review-flood guard).
 *
 * Without such an attribute there is no plan: fuzzy indexes chain different people into one giant
 * component (bench:partitions: 84-100 % of the accounts), and partitions must exchange candidates.
 */
import type { AttributeRuntime } from './attribute-runtime';
import { matchingRuntime } from './engine-records';
import { KeyIndex } from './indexes/key-index';
import type { AttributeMatchRule, MatchRecord, MatchingSettings } from './types';

export interface PartitionPlan {
  /** The mandatory attribute whose key classes partition the accounts. */
  attribute: string;
  /** Each record's partition (0 .. parts-1), in the order given. */
  partitionOf: Int32Array;
  /**
   * Each baseline record's partition: the one its class went to, or -1 when its class has no new
   * account (no account of the run can match it).
   */
  baselinePartitionOf: Int32Array;
  /** Records per partition. */
  sizes: number[];
  /** Records in the largest class: no plan by this attribute can put fewer in one partition. */
  largestClass: number;
  /** Each record's class (records of one class share a partition). */
  classOf: Int32Array;
  /** The heaviest class's estimated pairs (how the eligible attributes are compared). */
  heaviestWeight: number;
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

/**
 * Weights packed heaviest first, each into the least loaded of `parts` bins (ties: the lower weight
 * index, then the lower bin): each weight's bin and each bin's load. The plan packs classes with it,
 * and bench:partitions the components it compares the plan with.
 */
export function packHeaviestFirst(weights: readonly number[], parts: number): { binOf: Int32Array; loads: number[] } {
  const order = weights.map((_, i) => i).sort((x, y) => weights[y]! - weights[x]! || x - y);
  const binOf = new Int32Array(weights.length);
  const loads = new Array<number>(parts).fill(0);
  for (const i of order) {
    let least = 0;
    for (let q = 1; q < parts; q++) if (loads[q]! < loads[least]!) least = q;
    loads[least]! += weights[i]!;
    binOf[i] = least;
  }
  return { binOf, loads };
}

/**
 * Classes heaviest first, each into the least loaded partition (ties: the lower class number). A
 * class's weight estimates phase 1's work for it: each of its n new accounts is blocked against the
 * class's b baseline records and the new accounts before it, n * (1 + b + (n - 1) / 2) pairs. Packing
 * by accounts instead left a partition with 2.2x its share of the pairs at P = 8 (bench:partitions, an
 * HR set whose largest surname class holds 3 % of the accounts and a quarter of the pairs).
 */
function pack(classes: Int32Array, baseline: number, parts: number): Omit<PartitionPlan, 'attribute'> {
  const fresh = new Map<number, number>();
  const held = new Map<number, number>();
  for (let r = 0; r < classes.length; r++) {
    const counts = r < baseline ? held : fresh;
    counts.set(classes[r]!, (counts.get(classes[r]!) ?? 0) + 1);
  }
  const byNumber = [...fresh].sort((x, y) => x[0] - y[0]);
  const weights = byNumber.map(([c, n]) => n * (1 + (held.get(c) ?? 0) + (n - 1) / 2));
  const { binOf } = packHeaviestFirst(weights, parts);
  const sizes = new Array<number>(parts).fill(0);
  const partOfClass = new Map<number, number>();
  byNumber.forEach(([c, n], i) => {
    sizes[binOf[i]!]! += n;
    partOfClass.set(c, binOf[i]!);
  });
  // A copy: a view would keep the baseline's classes alive with the plan.
  const classOf = classes.slice(baseline);
  const baselinePartitionOf = classes.subarray(0, baseline).map((c) => partOfClass.get(c) ?? -1);
  // Loops, not Math.max(...): one argument per class overflows the stack past about 125,000 classes.
  let largestClass = 0;
  for (const n of fresh.values()) if (n > largestClass) largestClass = n;
  let heaviestWeight = 0;
  for (const w of weights) if (w > heaviestWeight) heaviestWeight = w;
  return {
    classOf,
    partitionOf: classOf.map((c) => partOfClass.get(c)!),
    baselinePartitionOf,
    sizes,
    largestClass,
    heaviestWeight,
  };
}

/** A mandatory attribute's blocking keys are lossless: planPartitions gives a plan. */
function keyedRuntime(rule: AttributeMatchRule, probabilistic: boolean): AttributeRuntime | undefined {
  if (!rule.mandatory) return undefined;
  const runtime = matchingRuntime(rule, probabilistic);
  const index = runtime.index();
  return index instanceof KeyIndex && index.lossless ? runtime : undefined;
}

/** Whether these settings give a plan (whatever the records). */
export function plannable(settings: MatchingSettings): boolean {
  return plannedAttributes(settings).length > 0;
}

/** The attributes a plan may partition by: mandatory, with lossless blocking keys. */
export function plannedAttributes(settings: MatchingSettings): string[] {
  const probabilistic = settings.model === 'probabilistic';
  return settings.attributes.filter((rule) => keyedRuntime(rule, probabilistic)).map((rule) => rule.attribute);
}

/** Records' blocking keys by one attribute a plan may partition by, computed without keeping the records. */
export class PlanKeys {
  private readonly runtime: AttributeRuntime;
  private readonly index: KeyIndex<unknown>;

  constructor(
    settings: MatchingSettings,
    readonly attribute: string,
  ) {
    const rule = settings.attributes.find((r) => r.attribute === attribute);
    const runtime = rule && keyedRuntime(rule, settings.model === 'probabilistic');
    if (!runtime) throw new RangeError(`${attribute} is no mandatory attribute with lossless keys`);
    this.runtime = runtime;
    this.index = runtime.index() as KeyIndex<unknown>;
  }

  /** Each record's keys, deduplicated (none: no value, the mandatory attribute cannot pass). */
  of(records: readonly MatchRecord[]): string[][] {
    this.runtime.append(records);
    const keys = records.map((_, r) => [...this.index.keysOf(r)]);
    this.runtime.truncate(0);
    return keys;
  }
}

/**
 * The plan over the new accounts `records` in `parts` partitions, by the eligible mandatory attribute
 * whose heaviest class is the lightest; undefined when no mandatory attribute has lossless keys. The
 * `baseline` (the identities the accounts are matched against) weighs the classes; its records also
 * join classes (one with two surname codes joins both), as the candidates they give do.
 */
export function planPartitions(
  settings: MatchingSettings,
  records: readonly MatchRecord[],
  parts: number,
  baseline: readonly MatchRecord[] = [],
): PartitionPlan | undefined {
  if (!Number.isInteger(parts) || parts < 1) throw new RangeError(`partitions must be a whole number >= 1: ${parts}`);
  let best: PartitionPlan | undefined;
  for (const rule of settings.attributes) {
    const runtime = keyedRuntime(rule, settings.model === 'probabilistic');
    if (!runtime) continue;
    const index = runtime.index() as KeyIndex<unknown>;
    runtime.append(baseline);
    runtime.append(records);
    const total = baseline.length + records.length;
    const plan = { attribute: rule.attribute, ...pack(keyClasses(index, total), baseline.length, parts) };
    if (!best || plan.heaviestWeight < best.heaviestWeight) best = plan;
  }
  return best;
}
