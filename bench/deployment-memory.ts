/**
 * Memory of a queue-mode deployment in a realistic run, for the chart's memory requests (#14 item 7):
 * real `fusion-proxy serve` processes (one api, one worker, chart defaults: WORKER_CONCURRENCY 4,
 * metrics on their own port), their own redis-server, the simulator with a tenant of tens of
 * thousands of accounts; each repeat aggregates it in full (plus test connections alongside) with
 * fresh processes. The figure is the kernel's high-water mark of resident memory (VmHWM), so no peak
 * is missed between samples. Idle RSS of the same processes is the baseline.
 *   npm run bench:deployment-memory
 *   BENCH_ACCOUNTS_PER_SOURCE=10000 BENCH_IDENTITIES=12000 BENCH_REPEATS=3 npm run bench:deployment-memory
 * Goals: the median peak of each role stays under the chart's memory request (values.yaml), and the
 * largest peak under its limit. Exit 1 on a miss.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { proxyItems } from '../src/proxy-client';
import { startSimulator } from '../src/simulator';
import { benchConnection, freePort, spawnRedis } from './harness';
import { LOGIN_DEFINITION } from '../test/support/tenant-config';

const ACCOUNTS_PER_SOURCE = Number(process.env.BENCH_ACCOUNTS_PER_SOURCE ?? 10_000);
const IDENTITIES = Number(process.env.BENCH_IDENTITIES ?? 12_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const PASSWORD = 'bench-memory-password-0123456789';
const CLI = path.join(__dirname, '../src/cli/main.js');
const VALUES = path.join(__dirname, '../../charts/fusion-proxy/values.yaml');

function mib(kb: number): number {
  return Math.round(kb / 1024);
}

function status(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

function toMiB(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`unexpected quantity ${q}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

async function serve(
  role: 'api' | 'worker',
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      ROLE: role,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: String(await freePort()),
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return { child, url };
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${role} did not become ready`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<number> {
  const values = parse(fs.readFileSync(VALUES, 'utf8')) as Record<
    'api' | 'worker',
    { resources: { requests: { memory: string }; limits: { memory: string } } }
  >;
  const redis = await spawnRedis();
  const peaks: Record<'api' | 'worker', number[]> = { api: [], worker: [] };
  const idle: Record<'api' | 'worker', number[]> = { api: [], worker: [] };
  let items = 0;
  let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
  try {
    for (let r = 0; r < REPEATS; r++) {
      // A fresh tenant each time: every repeat is a first aggregation (every fusion account created,
      // every unique value generated), the heaviest run; later runs of one tenant need less.
      await sim?.close();
      sim = await startSimulator({
        seed: 41,
        tenant: { identities: IDENTITIES, accountsPerSource: ACCOUNTS_PER_SOURCE, machineRate: 0.02 },
        rateLimit: false,
        logRequests: false,
      });
      const fusion = sim.tenant.source(sim.tenant.meta.fusionSourceId!);
      const config = {
        baseurl: sim.baseurl,
        clientId: sim.clientId,
        clientSecret: sim.clientSecret,
        spConnectorInstanceId: fusion.connectorAttributes.spConnectorInstanceId,
        sources: ['Contractors', 'LDAP', 'Legacy'],
        requestsPerSecond: 500,
        maxConcurrentRequests: 10,
        attributeDefinitions: [LOGIN_DEFINITION],
        matching: {
          attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }],
          // The simulator's names send most accounts to review; a memory bench measures the run, not the flood guard.
          maxReviewShare: 1,
        },
      };

      const flush = benchConnection(redis.url);
      await flush.flushall();
      await flush.quit();
      const env = { REDIS_URL: redis.url, PROXY_PASSWORD: PASSWORD, QUEUE_NAME: `bench-${r}` };
      const api = await serve('api', env);
      const worker = await serve('worker', env);
      idle.api.push(status(api.child.pid!, 'VmRSS'));
      idle.worker.push(status(worker.child.pid!, 'VmRSS'));
      const started = Date.now();
      const aggregation = (async () => {
        let n = 0;
        for await (const _ of proxyItems({
          url: `${api.url}/`,
          password: PASSWORD,
          type: 'std:account:list',
          input: {},
          config,
        }))
          n++;
        return n;
      })();
      // Small commands alongside, as a platform sends them during a long aggregation.
      const side = Promise.all(
        Array.from({ length: 3 }, async () => {
          for await (const _ of proxyItems({
            url: `${api.url}/`,
            password: PASSWORD,
            type: 'std:test-connection',
            input: {},
            config,
          }));
        }),
      );
      items = await aggregation;
      await side;
      peaks.api.push(status(api.child.pid!, 'VmHWM'));
      peaks.worker.push(status(worker.child.pid!, 'VmHWM'));
      process.stdout.write(
        `repeat ${r + 1}: ${items} items in ${((Date.now() - started) / 1000).toFixed(1)} s; peak RSS api ${mib(peaks.api[r]!)} MiB, worker ${mib(peaks.worker[r]!)} MiB\n`,
      );
      for (const p of [api, worker]) {
        const exited = new Promise((res) => p.child.once('exit', res));
        p.child.kill('SIGTERM');
        await exited;
      }
    }
  } finally {
    await sim?.close();
    await redis.stop();
  }
  let missed = false;
  process.stdout.write(
    `\n${IDENTITIES} identities, ${ACCOUNTS_PER_SOURCE} accounts per managed source, ${items} items; ${REPEATS} repeats, each a first aggregation of a fresh tenant\n`,
  );
  for (const role of ['api', 'worker'] as const) {
    const req = toMiB(values[role].resources.requests.memory);
    const lim = toMiB(values[role].resources.limits.memory);
    const med = mib(median(peaks[role]));
    const max = mib(Math.max(...peaks[role]));
    const okReq = med <= req;
    const okLim = max <= lim;
    missed ||= !okReq || !okLim;
    process.stdout.write(
      `${role.padEnd(6)} idle RSS ${mib(median(idle[role]))} MiB | peak RSS median ${med} MiB (goal <= request ${req} MiB: ${okReq ? 'met' : 'MISSED'}) | peak max ${max} MiB (goal <= limit ${lim} MiB: ${okLim ? 'met' : 'MISSED'})\n`,
    );
  }
  return missed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${String(e instanceof Error ? e.stack : e)}\n`);
    process.exit(2);
  },
);
