/** A partition decided in a worker thread (partition-worker.ts), its batches reported as they come. */
import { FusionError } from '../errors';
import { WorkerEntry } from '../matching/parallel/worker-entry';
import type { MatchRecord } from '../matching/types';
import type { BatchDecisions, PartitionOutput, PartitionStart, PartitionWork } from './partition-decisions';

/** To the thread. */
export type PartitionInbound =
  { type: 'work'; work: PartitionWork } | { type: 'import'; batch: number; records: MatchRecord[] };

/** From the thread. */
export type PartitionOutbound =
  | { type: 'batch'; decided: BatchDecisions }
  | { type: 'export'; to: number; batch: number; records: MatchRecord[] }
  | { type: 'error'; message: string };

const ENTRY = new WorkerEntry(__dirname, 'partition-worker');

export function partitionThreadsAvailable(): boolean {
  return ENTRY.available();
}

export interface PartitionThread {
  take(work: PartitionWork): void;
  /** Records moving in for a batch (another partition's export). */
  import(batch: number, records: MatchRecord[]): void;
  /** Ends the thread (idempotent); resolves once it has exited. */
  close(): Promise<void>;
}

/**
 * Starts a partition. `out` gets each batch decided, in order, and the records it sends another
 * partition; `onEnd` once, with the error, when it fails or its thread exits before close().
 */
export type StartPartition = (
  start: PartitionStart,
  out: PartitionOutput,
  onEnd: (error: Error) => void,
) => PartitionThread;

export const startPartitionThread: StartPartition = (start, out, onEnd) => {
  const worker = ENTRY.start(start);
  let ended = false;
  const end = (error: Error): void => {
    if (ended) return;
    ended = true;
    onEnd(new FusionError('MATCHING_PARTITION_FAILED', error.message, {}, { cause: error }));
  };
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      end(new Error(`matching partition thread exited (code ${code}) before deciding its accounts`));
      resolve();
    }),
  );
  worker.on('error', (e) => end(e));
  worker.on('message', (m: PartitionOutbound) => {
    if (ended) return;
    if (m.type === 'batch') out.decided(m.decided);
    else if (m.type === 'export') out.exported(m.to, m.batch, m.records);
    else end(new Error(`matching partition thread: ${m.message}`));
  });
  const send = (m: PartitionInbound): void => {
    if (!ended) worker.postMessage(m);
  };
  return {
    take: (work) => send({ type: 'work', work }),
    import: (batch, records) => send({ type: 'import', batch, records }),
    close: async () => {
      // Closed by the run: its exit is no failure.
      ended = true;
      await worker.terminate();
      await exited;
    },
  };
};
