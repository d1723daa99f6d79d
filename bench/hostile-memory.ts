/**
 * Memory under hostile traffic: the fault suite's 1,000+ hostile requests (huge strings and arrays,
 * deep nesting, oversized and slow bodies, password guesses) sent three times to an embedded
 * server in this process, with a full GC after each round. A child process cannot be collected on
 * demand, so the suite itself only reports its api's RSS; here the heap is measured after GC.
 *   npm run bench:hostile-memory        (needs node --expose-gc; the script passes it)
 * Goals (#10): heap after GC back to the baseline (within 5 MB) after every round; RSS bounded
 * (the third round's RSS at most 10% above the first's: no growth per round).
 */
import { hostileRequests, sendHostile } from '../test/chaos/hostile';
import { failedStream } from '../src/core/failed-stream';
import { createLogger } from '../src/observability/logger';
import { loadEnv } from '../src/server/env';
import { startServer } from '../src/server/server';

const PASSWORD = 'bench-password-0123456789';

async function main(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    process.stderr.write('run with node --expose-gc (npm run bench:hostile-memory does)\n');
    return 2;
  }
  const collect = async (): Promise<number> => {
    gc();
    await new Promise((r) => setTimeout(r, 100));
    gc();
    return process.memoryUsage().heapUsed / 1048576;
  };
  const env = loadEnv({ PORT: '0', HOST: '127.0.0.1', PROXY_PASSWORD: PASSWORD, LOG_LEVEL: 'debug' });
  const runner = (): AsyncIterable<Record<string, unknown>> =>
    failedStream(new Error('no command may run in this benchmark'));
  const server = await startServer(env, {
    runner,
    logger: createLogger({ level: 'debug', destination: { write: () => undefined } }),
  });
  const port = Number(new URL(server.url).port);
  const requests = hostileRequests(PASSWORD);
  const baseline = await collect();
  const rows: Array<{ round: number; peakMb: number; heapMb: number; rssMb: number }> = [];
  for (let round = 1; round <= 3; round++) {
    let next = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < requests.length) {
          await sendHostile(port, requests[next++]!);
          peak = Math.max(peak, process.memoryUsage().heapUsed / 1048576);
        }
      }),
    );
    rows.push({ round, peakMb: peak, heapMb: await collect(), rssMb: process.memoryUsage().rss / 1048576 });
  }
  await server.close();
  const f = (n: number): string => n.toFixed(1);
  console.log(`hostile requests per round: ${requests.length}; heap baseline after GC ${f(baseline)} MB`);
  for (const r of rows)
    console.log(`round ${r.round}: heap peak ${f(r.peakMb)} MB, after GC ${f(r.heapMb)} MB, RSS ${f(r.rssMb)} MB`);
  const worstHeap = Math.max(...rows.map((r) => r.heapMb - baseline));
  const rssGrowth = rows[2]!.rssMb / rows[0]!.rssMb;
  const goals = [
    { goal: 'heap after GC within 5 MB of baseline, every round', figure: `+${f(worstHeap)} MB`, ok: worstHeap <= 5 },
    { goal: 'RSS of round 3 at most 1.10x round 1', figure: `${rssGrowth.toFixed(2)}x`, ok: rssGrowth <= 1.1 },
  ];
  for (const g of goals) console.log(`${g.ok ? 'MET ' : 'MISS'} ${g.goal}: ${g.figure}`);
  return goals.every((g) => g.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
