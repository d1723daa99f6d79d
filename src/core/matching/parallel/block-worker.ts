/**
 * Entry of a matching worker thread: one ShardEngine, fed baseline columns and asked for slices.
 * Errors go back with the request they belong to; one in addBaseline fails every later block (the
 * shard's records would no longer be the owner's).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { sliceBuffers } from '../blocked-slice';
import type { MatchingSettings } from '../types';
import { ShardEngine } from './shard';
import type { ShardReply, ShardRequest } from './worker-protocol';

const port = parentPort!;
const engine = new ShardEngine((workerData as { settings: MatchingSettings }).settings);
let broken: string | undefined;

port.on('message', (msg: ShardRequest) => {
  if (msg.type === 'baseline' || msg.type === 'exclude') {
    try {
      if (broken) return;
      if (msg.type === 'baseline') engine.addBaseline(msg.cols);
      else engine.exclude(msg.records);
    } catch (e) {
      broken = e instanceof Error ? e.message : String(e);
    }
    return;
  }
  let reply: ShardReply;
  try {
    if (broken) throw new Error(`the shard lost baseline records: ${broken}`);
    const slice = msg.type === 'held' ? engine.blockHeld(msg.from, msg.to) : engine.block(msg.cols, msg.from, msg.to);
    reply = { id: msg.id, slice };
    port.postMessage(reply, sliceBuffers(slice));
    return;
  } catch (e) {
    reply = { id: msg.id, error: e instanceof Error ? e.message : String(e) };
  }
  port.postMessage(reply);
});
