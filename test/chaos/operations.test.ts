/**
 * #28: the fault suite's operations scenarios, on the same kind of deployment as chaos.test.ts (real
 * `fusion-proxy serve` processes: 2 api, 2 workers, their own redis-server, the simulator), every
 * setting at its default and LOG_LEVEL=debug. Redis paused past the reader lease mid-run (the run
 * must complete, not be "cancelled"); a ROLE=all server whose Redis is unreachable gets SIGTERM
 * (it must exit, logging the outage once); Prometheus scrapes the processes with the labels
 * Prometheus Operator sets (no metric may lose a label to them); the workers are SIGKILLed between
 * creating review forms and notifying (a later run notifies, exactly once). `npm run test:chaos:fast` runs the
 * fast part; `npm run test:chaos` (TEST_CHAOS=full) adds the 20-second Redis pause.
 */
import { isFusionError, errorMessage } from '../../src/core/errors';
import { proxyItems } from '../../src/proxy-client';
import { freePort } from '../support/free-port';
import { Prometheus, operatorTarget } from '../support/prometheus';
import { Proc } from '../support/serve-process';
import { Cluster, JOB_KEY, PROXY_PASSWORD } from './cluster';
import { seconds, table, type Row } from './figures';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

const FULL = process.env.TEST_CHAOS === 'full';
jest.setTimeout(scaled(FULL ? 15 * 60_000 : 6 * 60_000));

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  complete: boolean;
  items: number;
  code?: string;
  message?: string;
}

/** The outage reports among a process's log lines since `since` (shown in full when a count is off). */
function reportLines(p: Proc, since: number): string[] {
  return p.logs
    .slice(since)
    .join('')
    .split('\n')
    .filter((l) => /\(REDIS_URL\) (cannot be used|still cannot be used|now fails)/.test(l));
}

/** Lines a process logged about Redis being unusable (its outage report), and driver stack traces. */
function redisNoise(p: Proc, since: number): { reports: number; traces: number; childWarnings: number } {
  const text = p.logs.slice(since).join('');
  return {
    reports: reportLines(p, since).length,
    traces: (text.match(/\[ioredis\] Unhandled error event/g) ?? []).length,
    childWarnings: (text.match(/matching child worker: Redis error/g) ?? []).length,
  };
}

describe(`chaos, operations: 2 api, 2 workers, own Redis, the simulator (${FULL ? 'full' : 'fast subset'})`, () => {
  let c: Cluster;
  let baseline = 0;
  const rows: Row[] = [];
  const figures: string[] = [];

  async function aggregate(api: Proc): Promise<Outcome> {
    let items = 0;
    try {
      for await (const _ of proxyItems({
        url: `${api.url}/`,
        password: PROXY_PASSWORD,
        type: 'std:account:list',
        input: {},
        config: c.config(),
      }))
        items++;
      return { complete: true, items };
    } catch (e) {
      return { complete: false, items, code: isFusionError(e) ? e.code : 'UNKNOWN', message: errorMessage(e) };
    }
  }
  const saw = (o: Outcome): string => (o.complete ? `complete, ${o.items} items` : `${o.code}, ${o.items} items`);

  beforeAll(async () => {
    c = await Cluster.start({ identities: 600, accountsPerSource: 500 });
    const first = await aggregate(c.apis[0]!);
    expect(first.complete).toBe(true);
    baseline = first.items;
    figures.push(`baseline aggregation: ${baseline} items`);
  });

  afterAll(async () => {
    console.log(`fault suite, operations (${FULL ? 'full' : 'fast subset'})\n${figures.join('\n')}\n\n${table(rows)}`);
    await c?.stop();
  });

  if (FULL)
    it('Redis paused for 20 s mid-run (past the 15 s reader lease): the run completes, nobody is told "cancelled"', async () => {
      const redisBefore = await c.redisMemoryMb();
      const rssBefore = Math.max(...Object.values(c.rssMb()));
      const logsAt = c.procs.map((p) => p.logs.length);
      c.sim.control.injectFault({ pathTemplate: '/v3/accounts', latencyMs: 200, times: Infinity });
      const running = aggregate(c.apis[0]!);
      await until('the run set its flag', () => c.processingFlag() !== null, 60_000);
      c.redis.pause();
      await delay(20_000);
      c.redis.resume();
      const t0 = Date.now();
      const o = await running;
      c.sim.control.clearFaults();
      await until(
        'run lock and processing flag free',
        async () => (await c.runLocks()) === 0 && c.processingFlag() === null,
        120_000,
      );
      const released = seconds(Date.now() - t0);
      const next = await aggregate(c.apis[1]!);
      const noise = c.procs.map((p, i) => redisNoise(p, logsAt[i]!));
      rows.push({
        scenario: 'Redis SIGSTOP 20 s mid-run (past the reader lease), then SIGCONT',
        clientSaw: saw(o),
        shortSuccess: o.complete && o.items !== baseline,
        released: `${released} after the resume`,
        nextRun: next.complete && next.items === baseline ? 'complete' : `FAILED: ${saw(next)} ${next.message ?? ''}`,
        redisMb: `${redisBefore} / ${await c.redisMemoryMb()}`,
        rssMb: `${rssBefore} / ${Math.max(...Object.values(c.rssMb()))}`,
      });
      figures.push(
        `Redis pause: outage reports ${noise.map((n) => n.reports).join('/')} (api-1/api-2/worker-1/worker-2), ioredis stack traces ${noise.reduce((a, n) => a + n.traces, 0)} (goal 0)`,
      );
      expect(o).toMatchObject({ complete: true, items: baseline });
      expect(next).toMatchObject({ complete: true, items: baseline });
      expect(c.allLogs()).not.toMatch(/reader lease lapsed/);
    });

  it('ROLE=all with Redis unreachable after it served a request: the outage is logged once, SIGTERM stops it', async () => {
    const all = new Proc('all', 'all', await freePort(), {
      REDIS_URL: c.redis.url,
      JOB_ENCRYPTION_KEY: JOB_KEY,
      PROXY_PASSWORD,
      LOG_LEVEL: 'debug',
    });
    await all.start();
    try {
      const served = await aggregate(all);
      expect(served).toMatchObject({ complete: true, items: baseline });
      const logsAt = all.logs.length;
      await c.redis.kill();
      const down = Date.now();
      // Every connection meets the outage: readiness, commands (refused 503), the worker's polls.
      await until('not ready', async () => (await fetch(`${all.url}/readyz`)).status === 503, 30_000);
      // Until a reconnection attempt has failed and been reported; then more attempts and refused commands.
      await until('the outage reported', () => redisNoise(all, logsAt).reports > 0, 30_000);
      for (let i = 0; i < 3; i++) {
        const refused = await aggregate(all);
        expect(refused.code).toBe('QUEUE_UNAVAILABLE');
        await until('readiness still refused', async () => (await fetch(`${all.url}/readyz`)).status === 503, 30_000);
      }
      all.signal('SIGTERM');
      const code = await all.exited;
      const stoppedIn = seconds(Date.now() - down);
      const noise = redisNoise(all, logsAt);
      figures.push(
        `ROLE=all, Redis killed, SIGTERM: exit code ${code} ${stoppedIn} after the kill; outage reports ${noise.reports} (goal 1, then one a minute), ioredis stack traces ${noise.traces} (goal 0), child-worker warnings ${noise.childWarnings} (goal 0)`,
      );
      if (noise.reports !== 1) figures.push(`the outage reports:\n${reportLines(all, logsAt).join('\n')}`);
      expect(code).toBe(0);
      expect(noise).toEqual({ reports: 1, traces: 0, childWarnings: 0 });
      expect(all.logs.join('')).toContain('fusion-proxy stopped');
    } finally {
      if (all.alive) await all.kill('SIGKILL');
      await c.redis.start();
      await until(
        'the cluster ready again',
        async () =>
          (await Promise.all(c.procs.map(async (p) => (await fetch(`${p.url}/readyz`)).status))).every(
            (s) => s === 200,
          ),
        60_000,
      );
    }
  });

  it('scraped with the labels Prometheus Operator sets (endpoint, namespace, pod, service, job, instance): no metric loses a label to them', async () => {
    const prom = await Prometheus.start(
      c.procs.map((p) =>
        operatorTarget({
          service: p.role === 'api' ? 'fp-fusion-proxy-api-metrics' : 'fp-fusion-proxy-worker',
          pod: p.name,
          namespace: 'fusion',
          address: `127.0.0.1:${p.port}`,
        }),
      ),
    );
    try {
      // A run with two 429s, so the per-endpoint counters move.
      c.sim.control.injectFault({
        method: 'GET',
        pathTemplate: '/v3/accounts',
        status: 429,
        retryAfter: '0',
        times: 2,
      });
      expect(await aggregate(c.apis[0]!)).toMatchObject({ complete: true, items: baseline });
      c.sim.control.clearFaults();
      const after = Date.now() / 1000;
      await prom.scrapedAfter(after, c.procs.length);
      // A metric label the target also has would come back as exported_<label>, the target's value in its place.
      const clashes = await prom.query(
        'count by (__name__) ({__name__=~"fusion_.+", exported_endpoint!=""} or {__name__=~"fusion_.+", exported_job!=""} or {__name__=~"fusion_.+", exported_instance!=""} or {__name__=~"fusion_.+", exported_namespace!=""} or {__name__=~"fusion_.+", exported_pod!=""} or {__name__=~"fusion_.+", exported_service!=""})',
      );
      const byEndpoint = await prom.query('sum by (platform_endpoint) (fusion_platform_rate_limited_total)');
      const endpoints = byEndpoint.map((v) => v.metric.platform_endpoint).sort();
      const throttled = byEndpoint.find((v) => v.metric.platform_endpoint === '/v3/accounts');
      figures.push(
        `Prometheus Operator labels: metrics with a clashing label ${clashes.length} (goal 0); 429s by platform_endpoint: ${endpoints.length} series, /v3/accounts ${throttled?.value[1] ?? 'missing'}`,
      );
      expect(clashes).toEqual([]);
      expect(endpoints.length).toBeGreaterThan(1);
      expect(endpoints).not.toContain('metrics');
      expect(Number(throttled?.value[1])).toBe(2);
    } finally {
      await prom.stop();
    }
  });

  // Waits out the killed run's lock (default timings): only in npm run test:chaos, like chaos.test.ts's worker kills.
  if (FULL)
    it('worker SIGKILL between creating the review forms and notifying: a later run notifies, exactly once; no form twice', async () => {
      const { sim } = c;
      // Every potential duplicate gets its form again in the next run (the first run's forms are gone).
      sim.tenant.formInstances.clear();
      sim.tenant.formDefinitions.clear();
      sim.tenant.versions.forms++;
      const runsBefore = sim.control.workflowRuns().length;
      const injectedBefore = sim.control.counters().faultsInjected;
      // The notification is held at the platform: the worker has created every form and waits for it.
      sim.control.injectFault({ method: 'POST', pathTemplate: '/v3/workflows/{id}/test', hold: true, times: Infinity });
      const t0 = Date.now();
      const running = aggregate(c.apis[0]!);
      await until(
        'the notification reached the platform',
        () => sim.control.counters().faultsInjected > injectedBefore,
        120_000,
      );
      const formsAtKill = sim.tenant.formInstances.size;
      await Promise.all(c.workers.map((w) => w.kill('SIGKILL')));
      // The platform never handles the held notification: its client died. Released before the
      // simulator had read the closed socket, it went on and was delivered (then the next run told every
      // reviewer again): wait until the simulator has seen its client leave.
      await until('the held notification dropped by its dead client', () => sim.control.heldRequests() === 0, 30_000);
      sim.control.clearFaults();
      expect(sim.control.releaseHeld()).toBe(0);
      expect(sim.control.workflowRuns().length).toBe(runsBefore); // nothing was sent
      await Promise.all(c.workers.map((w) => w.start()));
      const o = await running;
      // A run whose process died cannot clear its processing flag: the next run replaces it.
      await until('run lock free', async () => (await c.runLocks()) === 0, 180_000);
      const released = `lock ${seconds(Date.now() - t0)}${c.processingFlag() !== null ? '; flag left (replaced by the next run)' : ''}`;
      const next = await aggregate(c.apis[1]!);

      const instances = [...sim.tenant.formInstances.values()];
      const accountIds = instances.map((i) => String((i['formInput'] as Record<string, unknown>)['accountId']));
      const runs = sim.control
        .workflowRuns()
        .slice(runsBefore)
        .map((r) => r.input as { body: string; recipients: string[] });
      // Per reviewer e-mail and form: told exactly once, whichever run told it.
      const told = new Map<string, number>();
      for (const r of runs)
        for (const id of accountIds)
          if (r.body.includes(`(id ${id})`))
            for (const to of r.recipients) told.set(`${to} ${id}`, (told.get(`${to} ${id}`) ?? 0) + 1);
      const emailOf = (id: string): string => String(sim.tenant.identities.get(id)?.attributes['email']);
      const expected = instances.flatMap((i) =>
        (i['recipients'] as Array<{ id: string }>).map(
          (r) => `${emailOf(r.id)} ${String((i['formInput'] as Record<string, unknown>)['accountId'])}`,
        ),
      );
      const outbox = sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes['fusionReviewOutbox'];
      rows.push({
        scenario: 'worker SIGKILL between the review forms and their notification',
        clientSaw: saw(o),
        shortSuccess: o.complete && o.items !== baseline,
        released: `${released} after the start`,
        nextRun: next.complete
          ? `complete; ${runs.length} messages for ${new Set(accountIds).size} forms (each reviewer told once)`
          : `FAILED: ${saw(next)} ${next.message ?? ''}`,
        redisMb: '-',
        rssMb: '-',
      });
      figures.push(
        `review notification after a kill: ${formsAtKill} forms at the kill, ${instances.length} after the next run (goal: the same), ${runs.length} messages, reviewer-form pairs told ${[...told.values()].filter((n) => n === 1).length} once / ${[...told.values()].filter((n) => n > 1).length} more than once / ${expected.filter((k) => !told.has(k)).length} never (goal: all once)`,
      );
      expect(next.complete).toBe(true);
      expect(new Set(accountIds).size).toBe(accountIds.length); // one form per account
      expect(instances.length).toBe(formsAtKill);
      expect(expected.length).toBeGreaterThan(0);
      for (const k of expected) expect([k, told.get(k)]).toEqual([k, 1]);
      expect(outbox ?? {}).toEqual({});
    });
});
