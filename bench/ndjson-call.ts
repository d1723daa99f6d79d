/**
 * One POST to the proxy server, its NDJSON answer parsed line by line as a client of any mode would:
 * the benches' one way to time a call (bench:proxy's throughput runs and its quick-lane latency).
 */
import http from 'node:http';

export interface CallResult {
  /** From the request's start to the response's end. */
  ms: number;
  /** From the request's start to the first item; -1 when none came. */
  firstItemMs: number;
  bytes: number;
  items: number;
}

/** Rejects on a status other than 200, a line that is not JSON, or a request error (an abort included). */
export function ndjsonCall(
  url: string,
  payload: string,
  opts: { agent: http.Agent; signal?: AbortSignal },
): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let firstItemMs = -1;
    let bytes = 0;
    let items = 0;
    let rest = '';
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: opts.agent,
        signal: opts.signal,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          bytes += Buffer.byteLength(d);
          const lines = (rest + d).split('\n');
          rest = lines.pop() ?? '';
          for (const line of lines) {
            if (!line) continue;
            JSON.parse(line);
            if (items++ === 0) firstItemMs = Number(process.hrtime.bigint() - t0) / 1e6;
          }
        });
        res.on('end', () => {
          if (rest) {
            JSON.parse(rest);
            items++;
          }
          resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, firstItemMs, bytes, items });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
