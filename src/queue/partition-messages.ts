/**
 * What a run and its partitions in other processes say to each other through Redis streams
 * (partition-keys.ts): the messages of a partition thread (partition-thread.ts) plus what a thread gets
 * at its start, in V8's serialization (a worker thread's own format: typed arrays and NaN scores cross
 * as they are). Every process of a release runs the same Node, so the format is shared.
 */
import { deserialize, serialize } from 'node:v8';
import type { PartitionStart } from '../core/aggregation/partition-decisions';
import type { PartitionInbound, PartitionOutbound } from '../core/aggregation/partition-thread';
import type { MatchRecord } from '../core/matching/types';

/** To a partition, in its inbound stream: its start, its baseline in chunks, then the run's batches. */
export type HostInbound =
  | { type: 'start'; start: Omit<PartitionStart, 'baseline'> }
  | { type: 'baseline'; records: MatchRecord[] }
  | PartitionInbound
  /** The run ended: the host stops (the keys are deleted next). */
  | { type: 'end' };

/**
 * From a partition, in the run's outbound stream. `seq` numbers a partition's messages: a host that
 * takes a partition over replays its inbound stream and says the same things again, in the same order,
 * so the run keeps the first of each number and drops the rest.
 */
export interface HostOutbound {
  part: number;
  seq: number;
  message: PartitionOutbound;
}

/** The stream field every message is stored under. */
export const FIELD = 'm';

export const encodeMessage = (m: HostInbound | HostOutbound): Buffer => serialize(m);

export function decodeInbound(b: Buffer): HostInbound {
  return deserialize(b) as HostInbound;
}

export function decodeOutbound(b: Buffer): HostOutbound {
  return deserialize(b) as HostOutbound;
}

/** XREAD's reply as entries: [id, its message bytes] (one field per entry). */
export function streamEntries(reply: [Buffer, [Buffer, Buffer[]][]][] | null): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  for (const [, entries] of reply ?? [])
    for (const [id, fields] of entries) {
      const i = fields.findIndex((f) => f.toString() === FIELD);
      if (i >= 0 && fields[i + 1]) out.push([id.toString(), fields[i + 1]!]);
    }
  return out;
}
