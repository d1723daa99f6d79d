/**
 * Entry of a partition thread (partition-thread.ts): decides one partition's accounts and posts each
 * batch's decisions as soon as it has them, so the run replays its batches while the thread goes on.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DerivedKeys } from './derived-key';
import { decideBatches } from './partition-decisions';
import type { PartitionMessage, PartitionWorkerData } from './partition-thread';

const port = parentPort!;
const { settings, namespace, input } = workerData as PartitionWorkerData;
const post = (m: PartitionMessage): void => port.postMessage(m);
try {
  for (const decided of decideBatches(settings, input, new DerivedKeys(namespace))) post({ type: 'batch', decided });
  post({ type: 'done' });
} catch (e) {
  post({ type: 'error', message: e instanceof Error ? e.message : String(e) });
}
