/**
 * #27 item 4 in bench:proxy: a test connection's latency while every long slot runs an aggregation and
 * as many more wait. The bench's runner holds a `std:account:list` with `input.holdMs` until the client
 * leaves (or the time passes), so the slots are certainly taken while the quick calls are timed.
 */
import http from 'node:http';
import { ndjsonCall } from './ndjson-call';

export interface QuickLaneFigures {
  p50: number;
  max: number;
  calls: number;
}

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/** A call's time to its answer's end (bench/ndjson-call.ts: the same call bench:proxy times). */
const post = async (url: string, payload: string, signal?: AbortSignal): Promise<number> =>
  (await ndjsonCall(url, payload, { agent, signal })).ms;

/**
 * Fills `longSlots` slots with held aggregations plus as many waiting, waits until `running()` says
 * the slots are taken, then times `calls` test connections one after the other.
 */
export async function quickLaneLatency(opts: {
  url: string;
  password: string;
  longSlots: number;
  running: () => Promise<number> | number;
  calls?: number;
}): Promise<QuickLaneFigures> {
  const config = { proxyPassword: opts.password, clientSecret: 'bench-secret' };
  const hold = JSON.stringify({ type: 'std:account:list', input: { holdMs: 120_000 }, config });
  const quick = JSON.stringify({ type: 'std:test-connection', input: {}, config });
  const ac = new AbortController();
  const held = Array.from({ length: opts.longSlots * 2 }, () => post(`${opts.url}/`, hold, ac.signal).catch(() => 0));
  try {
    for (let i = 0; (await opts.running()) < opts.longSlots; i++) {
      if (i > 6000) throw new Error(`the ${opts.longSlots} long slots never filled`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const samples: number[] = [];
    for (let i = 0; i < (opts.calls ?? 20); i++) samples.push(await post(`${opts.url}/`, quick));
    samples.sort((a, b) => a - b);
    return { p50: samples[Math.floor(samples.length / 2)]!, max: samples[samples.length - 1]!, calls: samples.length };
  } finally {
    ac.abort();
    await Promise.all(held);
  }
}
