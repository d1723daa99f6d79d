/**
 * A run's matching decisions made in partitions (issue 27's partitioned run). With a partition plan
 * (partition-plan.ts) every account a new account can match lies in its partition: the baseline
 * records of its classes, and the run's accounts of its classes, created or still to be matched. A
 * partition therefore replays the run's decisions over its own accounts alone: it matches them in the
 * run's batches, in the run's order, and lets the ones without a potential duplicate join its
 * baseline after their batch, under the connector keys the run will give them (derived-key.ts). The
 * rules model only: a pair's outcome and score then depend on the two records alone (the
 * probabilistic model's statistics and term frequencies come from every record of the run).
 */
import { buildMatcher } from '../matching/matcher';
import { planPartitions, type PartitionPlan } from '../matching/partition-plan';
import type { MatchRecord, MatchStats, MatchingSettings, PotentialDuplicate } from '../matching/types';
import type { DerivedKeys } from './derived-key';
import { reviewedDuplicates } from './duplicate-review';

/** A new account as a partition decides it. */
export interface PartitionAccount {
  /** The source account's id. */
  id: string;
  /** The identity it is correlated with, never its own duplicate (reviewedDuplicates). */
  identityId?: string;
  /** Its merged attributes (those the matcher reads suffice). */
  attributes: Record<string, unknown>;
  /** The run's batch it is matched in: ascending in the order the accounts are given. */
  batch: number;
  /** A reviewer's "not a duplicate": created without matching. */
  skipsMatching?: boolean;
}

/** What one partition is given: everything its accounts can meet. */
export interface PartitionInput {
  baseline: MatchRecord[];
  accounts: PartitionAccount[];
}

/**
 * One batch of a partition decided: what the matcher found per account (accounts without a potential
 * duplicate are absent), the accounts created (nothing left to review), and the matcher's counts.
 */
export interface BatchDecisions {
  batch: number;
  found: [string, PotentialDuplicate[]][];
  created: string[];
  stats: MatchStats;
  /** Each matched account's candidates, by the label of the index that generated them (the metric). */
  candidates: [string, number][];
}

/**
 * The plan's partitions, each with its baseline records and its accounts in the order given;
 * undefined without a plan (no mandatory attribute with lossless keys, or the probabilistic model).
 */
export function partitionRun(
  settings: MatchingSettings,
  baseline: readonly MatchRecord[],
  accounts: readonly PartitionAccount[],
  parts: number,
): { plan: PartitionPlan; inputs: PartitionInput[] } | undefined {
  if (settings.model === 'probabilistic') return undefined;
  const plan = planPartitions(settings, accounts, parts, baseline);
  if (!plan) return undefined;
  const inputs = Array.from({ length: parts }, (): PartitionInput => ({ baseline: [], accounts: [] }));
  baseline.forEach((r, i) => {
    const p = plan.baselinePartitionOf[i]!;
    if (p >= 0) inputs[p]!.baseline.push(r);
  });
  accounts.forEach((a, i) => inputs[plan.partitionOf[i]!]!.accounts.push(a));
  return { plan, inputs };
}

/**
 * One partition's decisions, batch by batch, made as the run makes them (batch-processor.ts) over its
 * records alone.
 */
export function* decideBatches(
  settings: MatchingSettings,
  input: PartitionInput,
  keys: DerivedKeys,
): Generator<BatchDecisions> {
  let candidates: [string, number][] = [];
  const matcher = buildMatcher(settings, { observeCandidates: (label, k) => void candidates.push([label, k]) });
  matcher.addBaseline(input.baseline);
  const { accounts } = input;
  for (let start = 0; start < accounts.length;) {
    const batch = accounts[start]!.batch;
    let end = start + 1;
    while (end < accounts.length && accounts[end]!.batch === batch) end++;
    if (end < accounts.length && accounts[end]!.batch < batch)
      throw new RangeError(`partition accounts out of batch order at ${accounts[end]!.id}`);
    const toMatch: MatchRecord[] = [];
    for (let i = start; i < end; i++)
      if (!accounts[i]!.skipsMatching) toMatch.push({ id: accounts[i]!.id, attributes: accounts[i]!.attributes });
    const result = matcher.match(toMatch, { topK: Number.POSITIVE_INFINITY });
    const decided: BatchDecisions = { batch, found: [], created: [], stats: result.stats, candidates };
    candidates = [];
    const joined: MatchRecord[] = [];
    for (let i = start; i < end; i++) {
      const a = accounts[i]!;
      const duplicates = result.duplicates.get(a.id);
      if (duplicates) decided.found.push([a.id, duplicates]);
      if (reviewedDuplicates(duplicates, a.identityId).length > 0) continue;
      decided.created.push(a.id);
      joined.push({ id: keys.keyOf(a.id), attributes: a.attributes });
    }
    matcher.addBaseline(joined);
    yield decided;
    start = end;
  }
}
