/**
 * A shard: the matching settings and a copy of the records (baseline, then each call's new ones),
 * computing phase 1 for a slice of the new accounts. In process (tests, and where no worker file
 * ships) or in a worker thread (worker-shard.ts); the owner cannot tell them apart.
 */
import type { BlockedSlice } from '../blocked-slice';
import { buildMatchEngine, type MatchEngine } from '../matcher';
import type { MatchingSettings } from '../types';
import { decodeRecords, type RecordColumns } from './record-columns';

export interface Shard {
  /** Appends baseline records (in the order of the owner's addBaseline calls). */
  addBaseline(cols: RecordColumns): void;
  /** Phase 1 for new accounts from..to-1 of these new records; the shard keeps none of them. */
  block(newRecords: RecordColumns, from: number, to: number): Promise<BlockedSlice>;
  /** Phase 1 for its records from..to-1, each against the records before it (MatchEngine.blockHeld). */
  blockHeld(from: number, to: number): Promise<BlockedSlice>;
  /** Records never a candidate from now on (held accounts that will not join): fewer pairs to score. */
  exclude(records: Int32Array): void;
  close(): Promise<void>;
}

/** The shard's engine and its two operations; shared by the in-process shard and the worker thread. */
export class ShardEngine {
  private readonly engine: MatchEngine;

  constructor(settings: MatchingSettings) {
    this.engine = buildMatchEngine(settings, {}, true);
  }

  addBaseline(cols: RecordColumns): void {
    const { ids, values } = decodeRecords(cols);
    this.engine.addValues(ids, values);
  }

  block(newRecords: RecordColumns, from: number, to: number): BlockedSlice {
    const { ids, values } = decodeRecords(newRecords);
    const B = this.engine.appendNew([]);
    this.engine.addValues(ids, values, true);
    try {
      return this.engine.blockSlice(B, from, to);
    } finally {
      this.engine.dropNew(B);
    }
  }

  blockHeld(from: number, to: number): BlockedSlice {
    return this.engine.blockHeld(from, to);
  }

  exclude(records: Int32Array): void {
    this.engine.exclude(records);
  }
}

export function inProcessShard(settings: MatchingSettings): Shard {
  const engine = new ShardEngine(settings);
  return {
    addBaseline: (cols) => engine.addBaseline(cols),
    block: (cols, from, to) => Promise.resolve(engine.block(cols, from, to)),
    blockHeld: async (from, to) => engine.blockHeld(from, to),
    exclude: (records) => engine.exclude(records),
    close: () => Promise.resolve(),
  };
}
