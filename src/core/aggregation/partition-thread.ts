/** A partition decided in a worker thread (partition-worker.ts), its batches reported as they come. */
import { WorkerEntry } from '../matching/parallel/worker-entry';
import type { MatchingSettings } from '../matching/types';
import type { BatchDecisions, PartitionInput } from './partition-decisions';

export interface PartitionWorkerData {
  settings: MatchingSettings;
  /** The run's key namespace (DerivedKeys.namespaceId): the thread names created accounts as the run will. */
  namespace: string;
  input: PartitionInput;
}

export type PartitionMessage =
  { type: 'batch'; decided: BatchDecisions } | { type: 'done' } | { type: 'error'; message: string };

const ENTRY = new WorkerEntry(__dirname, 'partition-worker');

export function partitionThreadsAvailable(): boolean {
  return ENTRY.available();
}

export interface PartitionThread {
  /** Ends the thread (idempotent); resolves once it has exited. */
  close(): Promise<void>;
}

export type StartPartition = (
  data: PartitionWorkerData,
  onBatch: (decided: BatchDecisions) => void,
  onEnd: (error?: Error) => void,
) => PartitionThread;

/**
 * Starts the thread. `onBatch` gets each batch decided, in order; `onEnd` once, with nothing when every
 * batch was reported, else the error (the thread failed or exited first).
 */
export const startPartitionThread: StartPartition = (data, onBatch, onEnd) => {
  const worker = ENTRY.start(data);
  let ended = false;
  const end = (error?: Error): void => {
    if (ended) return;
    ended = true;
    onEnd(error);
  };
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      end(new Error(`matching partition thread exited (code ${code}) before deciding its accounts`));
      resolve();
    }),
  );
  worker.on('error', (e) => end(e));
  worker.on('message', (m: PartitionMessage) => {
    if (ended) return;
    if (m.type === 'batch') onBatch(m.decided);
    else if (m.type === 'done') end();
    else end(new Error(`matching partition thread: ${m.message}`));
  });
  return {
    close: async () => {
      await worker.terminate();
      await exited;
    },
  };
};
