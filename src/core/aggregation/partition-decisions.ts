/**
 * One partition of a run decided in partitions (issue 27): it replays the run's decisions over its
 * own records. Every account a new account can match lies in its class, and its class lives in one
 * partition (partition-router.ts), so the partition matches its accounts in the run's batches, in the
 * run's order, against its baseline, the accounts it created before and those before it in the batch;
 * the ones without a potential duplicate left to review join its baseline after their batch, under
 * the connector keys the run will give them (derived-key.ts). The rules model only: a pair's outcome
 * and score then depend on the two records alone (the probabilistic model's statistics and term
 * frequencies come from every record of the run).
 *
 * Before deciding a batch it sends the classes moving away (their records: moves carry only records
 * from before the batch, so it never waits for that) and then waits for the classes moving in.
 */
import { buildMatcher, type Matcher } from '../matching/matcher';
import { PlanKeys } from '../matching/partition-plan';
import type { MatchRecord, MatchStats, MatchingSettings, PotentialDuplicate } from '../matching/types';
import { DerivedKeys } from './derived-key';
import { reviewedDuplicates } from './duplicate-review';
import { encodeFound, foundAttributes, type FoundColumns } from './found-columns';
import { RecordPacker, type Packed } from './packed-account';

/** A new account as a partition decides it. */
export interface PartitionAccount {
  /** The source account's id. */
  id: string;
  /** The identity it is correlated with, never its own duplicate (reviewedDuplicates). */
  identityId?: string;
  /** Its merged attributes (those the matcher reads suffice). */
  attributes: Record<string, unknown>;
  /** A reviewer's "not a duplicate": created without matching. */
  skipsMatching?: boolean;
}

/** One batch of the run for one partition: its accounts, and the classes moving out and in first. */
export interface PartitionWork {
  batch: number;
  accounts: PartitionAccount[];
  /** Records with any of these keys go to partition `to`. */
  exports: { to: number; keys: string[] }[];
  /** Moves to wait for (imports of this batch). */
  imports: number;
  /** Baseline records the run read after the partitions started: held before the batch is decided. */
  baseline?: MatchRecord[];
}

/** What a partition starts with. */
export interface PartitionStart {
  settings: MatchingSettings;
  /** The run's key namespace (DerivedKeys.namespaceId): the partition names created accounts as the run will. */
  namespace: string;
  /** The plan's attribute (moves select records by its keys). */
  attribute: string;
  baseline: MatchRecord[];
}

/**
 * One batch of a partition decided: what the matcher found per account (accounts without a potential
 * duplicate are absent; by column, found-columns.ts), the accounts created (nothing left to review), and
 * the matcher's counts.
 */
export interface BatchDecisions {
  batch: number;
  found: FoundColumns;
  created: string[];
  stats: MatchStats;
  /** Each matched account's candidates, by the label of the index that generated them (the metric). */
  candidates: [string, number][];
}

export interface PartitionOutput {
  decided(d: BatchDecisions): void;
  exported(to: number, batch: number, records: MatchRecord[]): void;
}

export class PartitionDecider {
  private readonly matcher: Matcher;
  private readonly planKeys: PlanKeys;
  private readonly derived: DerivedKeys;
  /**
   * The records held (baseline, created, moved in) by key: what a move sends. Packed: the matcher keeps
   * prepared values, not the records, so these are their only copies (a record of 4 attributes: 117 bytes
   * against 207 as objects).
   */
  private readonly byKey = new Map<string, number[]>();
  /** byKey's records by number (a record under several keys is listed once per key, held once). */
  private readonly held: Packed<MatchRecord>[] = [];
  private readonly packer = new RecordPacker();
  /**
   * Ids of the records this partition sent away. Only those can come back while it still holds them: a
   * record is in two partitions only once one of them sent it (a set of all ids held cost ~40 MB at 1M).
   */
  private readonly sent = new Set<string>();
  private readonly queue: PartitionWork[] = [];
  /** The head of the queue sent its exports. */
  private exported = false;
  private readonly imported = new Map<number, MatchRecord[][]>();
  private candidates: [string, number][] = [];
  /** The run's directory rows of the records held that have one (MatchRecord.ref): what found candidates name. */
  private readonly refs = new Map<string, number>();
  /** The matching attributes in the settings' order (how found duplicates are encoded). */
  private readonly attributes: string[];

  constructor(
    start: PartitionStart,
    private readonly out: PartitionOutput,
  ) {
    this.matcher = buildMatcher(start.settings, {
      observeCandidates: (label, k) => void this.candidates.push([label, k]),
    });
    this.planKeys = new PlanKeys(start.settings, start.attribute);
    this.derived = new DerivedKeys(start.namespace);
    this.attributes = foundAttributes(start.settings);
    this.hold(start.baseline);
  }

  take(work: PartitionWork): void {
    this.queue.push(work);
    this.pump();
  }

  import(batch: number, records: MatchRecord[]): void {
    const list = this.imported.get(batch);
    if (list) list.push(records);
    else this.imported.set(batch, [records]);
    this.pump();
  }

  /** Decides the batches whose moves have all arrived, in order. */
  private pump(): void {
    for (let work = this.queue[0]; work; work = this.queue[0]) {
      if (!this.exported) {
        for (const e of work.exports) this.out.exported(e.to, work.batch, this.holding(e.keys));
        this.exported = true;
      }
      const moved = this.imported.get(work.batch) ?? [];
      if (moved.length < work.imports) return;
      this.queue.shift();
      this.exported = false;
      this.imported.delete(work.batch);
      // A class may come back to a partition that kept its copies: those are held already.
      for (const records of moved) this.hold(records.filter((r) => !this.sent.has(r.id)));
      if (work.baseline) this.hold(work.baseline);
      this.out.decided(this.decide(work));
    }
  }

  private decide(work: PartitionWork): BatchDecisions {
    const { accounts } = work;
    const toMatch = accounts.filter((a) => !a.skipsMatching);
    const result = this.matcher.match(toMatch, { topK: Number.POSITIVE_INFINITY });
    const found: [string, PotentialDuplicate[]][] = [];
    const created: string[] = [];
    const joined: MatchRecord[] = [];
    for (const a of accounts) {
      const duplicates = result.duplicates.get(a.id);
      if (duplicates) found.push([a.id, duplicates]);
      if (reviewedDuplicates(duplicates, a.identityId).length > 0) continue;
      created.push(a.id);
      joined.push({ id: this.derived.keyOf(a.id), attributes: a.attributes });
    }
    this.hold(joined);
    const decided: BatchDecisions = {
      batch: work.batch,
      found: encodeFound(found, this.attributes, (id) => this.refs.get(id)),
      created,
      stats: result.stats,
      candidates: this.candidates,
    };
    this.candidates = [];
    return decided;
  }

  private hold(records: MatchRecord[]): void {
    if (records.length === 0) return;
    this.matcher.addBaseline(records);
    const keys = this.planKeys.of(records);
    records.forEach((r, i) => {
      const ks = keys[i]!;
      // A record without a key is never a candidate of an account here, nor moved.
      if (ks.length === 0) return;
      const n = this.held.push(this.packer.packWithAttributes(r)) - 1;
      // Only records with a key can be found here. A record held again without a row (never: created
      // keys are not identity ids) must not keep another's.
      if (r.ref !== undefined) this.refs.set(r.id, r.ref);
      else this.refs.delete(r.id);
      for (const k of ks) {
        const list = this.byKey.get(k);
        if (list) list.push(n);
        else this.byKey.set(k, [n]);
      }
    });
  }

  /** The records held with any of these keys, each once (noted as sent). */
  private holding(keys: readonly string[]): MatchRecord[] {
    const picked = new Set<number>();
    for (const k of keys) for (const n of this.byKey.get(k) ?? []) picked.add(n);
    const records: MatchRecord[] = [];
    for (const n of picked) {
      const r = this.packer.unpackWithAttributes(this.held[n]!);
      this.sent.add(r.id);
      records.push(r);
    }
    return records;
  }
}
