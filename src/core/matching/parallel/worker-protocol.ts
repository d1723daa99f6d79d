/** Messages between the owner and a matching worker thread. */
import type { BlockedSlice } from '../blocked-slice';
import type { RecordColumns } from './record-columns';

export type ShardRequest =
  | { type: 'baseline'; cols: RecordColumns }
  | { type: 'exclude'; records: Int32Array }
  | { type: 'block'; id: number; cols: RecordColumns; from: number; to: number }
  | { type: 'held'; id: number; from: number; to: number };

export type ShardReply = { id: number; slice: BlockedSlice } | { id: number; error: string };
