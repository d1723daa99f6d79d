/**
 * A shard in a worker thread. The thread runs the compiled block-worker.js beside this file (dist/,
 * .bench-out/); from TypeScript sources (jest) it compiles them on load with @swc/core, a dev
 * dependency. Where neither exists (the connector's single-file bundle) there is no worker entry
 * and matching stays in-thread (workerEntryAvailable() is false).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BlockedSlice } from '../blocked-slice';
import type { MatchingSettings } from '../types';
import type { Shard } from './shard';
import type { ShardReply, ShardRequest } from './worker-protocol';

const COMPILED = join(__dirname, 'block-worker.js');
const SOURCE = join(__dirname, 'block-worker.ts');

// Registers a .ts loader in the thread, then loads the entry: only when running from sources.
const FROM_SOURCE = `
const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');
require.extensions['.ts'] = (module, file) => {
  const { code } = transformSync(readFileSync(file, 'utf8'), {
    filename: file,
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, file);
};
require(${JSON.stringify(SOURCE)});
`;

export function workerEntryAvailable(): boolean {
  return existsSync(COMPILED) || existsSync(SOURCE);
}

/** Threads started and not yet exited, for the tests that check none is left behind. */
let live = 0;
export function liveMatchingThreads(): number {
  return live;
}

export function workerShard(settings: MatchingSettings): Shard {
  const worker = existsSync(COMPILED)
    ? new Worker(COMPILED, { workerData: { settings } })
    : new Worker(FROM_SOURCE, { eval: true, workerData: { settings } });
  live++;
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
      live--;
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
