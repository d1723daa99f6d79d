/** A shard in a worker thread (block-worker.ts); worker-entry.ts starts it. */
import type { BlockedSlice } from '../blocked-slice';
import type { MatchingSettings } from '../types';
import type { Shard } from './shard';
import { WorkerEntry } from './worker-entry';
import type { ShardReply, ShardRequest } from './worker-protocol';

export { liveMatchingThreads } from './worker-entry';

const ENTRY = new WorkerEntry(__dirname, 'block-worker');

export function workerEntryAvailable(): boolean {
  return ENTRY.available();
}

export function workerShard(settings: MatchingSettings): Shard {
  const worker = ENTRY.start({ settings });
  const waiting = new Map<number, { resolve: (s: BlockedSlice) => void; reject: (e: Error) => void }>();
  let failure: Error | undefined;
  let next = 0;
  const failAll = (e: Error): void => {
    failure ??= e;
    for (const w of waiting.values()) w.reject(failure);
    waiting.clear();
  };
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      failAll(new Error(`matching thread exited (code ${code})`));
      resolve();
    }),
  );
  worker.on('error', (e) => failAll(e));
  worker.on('message', (reply: ShardReply) => {
    const w = waiting.get(reply.id);
    if (!w) return;
    waiting.delete(reply.id);
    if ('error' in reply) w.reject(new Error(`matching thread: ${reply.error}`));
    else w.resolve(reply.slice);
  });
  // The pool never keeps the process alive; a pending request refs it back.
  worker.unref();
  const send = (msg: ShardRequest): void => worker.postMessage(msg);
  const request = (msg: (id: number) => ShardRequest): Promise<BlockedSlice> => {
    if (failure) return Promise.reject(failure);
    const id = next++;
    worker.ref();
    return new Promise<BlockedSlice>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      send(msg(id));
    }).finally(() => {
      if (waiting.size === 0) worker.unref();
    });
  };
  return {
    addBaseline: (cols) => {
      if (!failure) send({ type: 'baseline', cols });
    },
    block: (cols, from, to) => request((id) => ({ type: 'block', id, cols, from, to })),
    blockHeld: (from, to) => request((id) => ({ type: 'held', id, from, to })),
    exclude: (records) => {
      if (!failure) send({ type: 'exclude', records });
    },
    close: async () => {
      await worker.terminate();
      await exited;
    },
  };
}
