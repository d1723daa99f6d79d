/**
 * Entry of a partition thread (partition-thread.ts): decides one partition's batches as the run sends
 * them and posts each batch's decisions as soon as it has them, so the run goes on while it decides.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PartitionDecider, type PartitionStart } from './partition-decisions';
import type { PartitionInbound, PartitionOutbound } from './partition-thread';

const port = parentPort!;
const post = (m: PartitionOutbound): void => port.postMessage(m);
const fail = (e: unknown): void => post({ type: 'error', message: e instanceof Error ? e.message : String(e) });
let decider: PartitionDecider | undefined;
try {
  decider = new PartitionDecider(workerData as PartitionStart, {
    decided: (decided) => post({ type: 'batch', decided }),
    exported: (to, batch, records) => post({ type: 'export', to, batch, records }),
  });
} catch (e) {
  fail(e);
}
port.on('message', (m: PartitionInbound) => {
  try {
    if (m.type === 'work') decider?.take(m.work);
    else decider?.import(m.batch, m.records);
  } catch (e) {
    fail(e);
  }
});
