/**
 * #14 item 1: a scale-in (KEDA or any controller) sends SIGTERM to a worker that may be running an
 * aggregation. With the chart's worker settings (SHUTDOWN_GRACE_MS = terminationGracePeriodSeconds
 * - 10 s), the worker stops taking jobs, finishes the running one and only then exits: the client
 * gets the whole answer. Real processes (one api, one worker: the scale-to-zero case), their own
 * Redis, the simulator; a held platform request keeps the run in its middle while the signal lands.
 */
import { Redis } from 'ioredis';
import { proxyItems } from '../../src/proxy-client';
import { activeListKey, waitListKey } from '../../src/queue/queue-names';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { Proc } from '../support/serve-process';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

/** The limit of each wait below (quiet machine; until() scales it). */
const WAIT_MS = 60_000;

jest.setTimeout(scaled(180_000));

const PASSWORD = 'scale-in-proxy-password-5b2e8c1d';
const QUEUE = 'fusion-commands';
/** The chart's default worker grace: terminationGracePeriodSeconds 900 minus 10 s. */
const CHART_WORKER_GRACE_MS = String((900 - 10) * 1000);

describe('scale-in during an aggregation (SIGTERM to the worker running it)', () => {
  let redis: OwnRedis;
  let control: Redis;
  let sim: RunningSimulator;
  let api: Proc;
  let worker: Proc;

  beforeAll(async () => {
    redis = await startOwnRedis();
    control = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    sim = await startSimulator({
      seed: 23,
      tenant: { identities: 300, accountsPerSource: 250, machineRate: 0.02 },
      rateLimit: false,
      logRequests: false,
    });
    const common = { REDIS_URL: redis.url, JOB_ENCRYPTION_KEY: 'd'.repeat(64) };
    api = new Proc('api', 'api', await freePort(), { ...common, ROLE: 'api', PROXY_PASSWORD: PASSWORD });
    worker = new Proc('worker', 'worker', await freePort(), {
      ...common,
      ROLE: 'worker',
      SHUTDOWN_GRACE_MS: CHART_WORKER_GRACE_MS,
    });
    await Promise.all([api.start(), worker.start()]);
  });
  afterAll(async () => {
    await Promise.all([api, worker].map((p) => p?.kill('SIGKILL').catch(() => undefined)));
    control?.disconnect();
    await sim?.close();
    await redis?.stop();
  });

  const config = (): Record<string, unknown> => ({
    baseurl: sim.baseurl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    spConnectorInstanceId: sim.tenant.source(sim.tenant.meta.fusionSourceId!).connectorAttributes.spConnectorInstanceId,
    sources: ['Contractors', 'LDAP', 'Legacy'],
    requestsPerSecond: 500,
    maxConcurrentRequests: 10,
    matching: { attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }] },
  });
  const aggregate = async (): Promise<number> => {
    let n = 0;
    for await (const _ of proxyItems({
      url: `${api.url}/`,
      password: PASSWORD,
      type: 'std:account:list',
      input: {},
      config: config(),
    }))
      n++;
    return n;
  };

  it('the running aggregation finishes with every item, the queue lists show it as active (not waiting), then the worker exits', async () => {
    const baseline = await aggregate();
    expect(baseline).toBeGreaterThan(0);

    const heldBefore = sim.control.counters().faultsInjected;
    sim.control.injectFault({ method: 'GET', pathTemplate: '/v3/accounts', nth: 2, hold: true });
    const running = aggregate();
    running.catch(() => undefined);
    await until(
      'the run is held in the middle of reading accounts',
      () => {
        return sim.control.counters().faultsInjected > heldBefore;
      },
      WAIT_MS,
    );
    // What KEDA's triggers read now: nothing waits, one job runs. A trigger on the wait list alone
    // would count 0 and scale this worker away.
    expect(await control.llen(waitListKey(QUEUE))).toBe(0);
    expect(await control.llen(activeListKey(QUEUE))).toBe(1);

    worker.signal('SIGTERM');
    // It drains: out of rotation, still alive, the job still active.
    await until(
      'the worker reports not ready',
      async () => (await fetch(`${worker.url}/readyz`)).status === 503,
      WAIT_MS,
    );
    expect(worker.alive).toBe(true);
    expect(await control.llen(activeListKey(QUEUE))).toBe(1);

    expect(sim.control.releaseHeld()).toBe(1);
    expect(await running).toBe(baseline);
    expect(await worker.exited).toBe(0);

    const lines = worker.logLines();
    const shutdownAt = lines.findIndex((l) => String(l.msg).startsWith('shutting down'));
    const finished = lines.filter((l) => l.msg === 'command finished');
    expect(shutdownAt).toBeGreaterThanOrEqual(0);
    // The second run finished after the signal, successfully, and nothing was cut.
    expect(finished.map((l) => l.outcome)).toEqual(['success', 'success']);
    expect(lines.indexOf(finished[1]!)).toBeGreaterThan(shutdownAt);
    expect(worker.logs.join('')).not.toContain('SERVER_SHUTTING_DOWN');
    expect(await control.llen(activeListKey(QUEUE))).toBe(0);
    process.stdout.write(`scale-in: ${baseline} items before, ${baseline} after a SIGTERM mid-run\n`);
  });

  it('what protects it is the grace: a worker whose grace ends before the run stops it, and the client gets an error, never a short success', async () => {
    worker = new Proc('short-grace worker', 'worker', await freePort(), {
      REDIS_URL: redis.url,
      JOB_ENCRYPTION_KEY: 'd'.repeat(64),
      ROLE: 'worker',
      SHUTDOWN_GRACE_MS: '0',
    });
    await worker.start();
    const heldBefore = sim.control.counters().faultsInjected;
    sim.control.injectFault({ method: 'GET', pathTemplate: '/v3/accounts', nth: 2, hold: true });
    const running = aggregate();
    running.catch(() => undefined);
    await until('the run is held', () => sim.control.counters().faultsInjected > heldBefore, WAIT_MS);
    worker.signal('SIGTERM');
    await expect(running).rejects.toThrow(/shut down before it finished/);
    expect(await worker.exited).toBe(0);
    sim.control.releaseHeld();
  });

  it('a scale-in abort is an error on the worker (the aggregation-failed alert counts it), and a final scrape reads it before the worker exits', async () => {
    const scrape = async (): Promise<string> => (await fetch(`${worker.url}/metrics`)).text();
    const value = (text: string, series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line ? Number(line.split(' ')[1]) : NaN;
    };
    const failed = 'fusion_jobs_total{command="std:account:list",outcome="error"}';
    const cancelled = 'fusion_jobs_total{command="std:account:list",outcome="cancelled"}';
    const shutdownErrors = 'fusion_errors_total{component="worker",code="SERVER_SHUTTING_DOWN"}';
    worker = new Proc('scraped worker', 'worker', await freePort(), {
      REDIS_URL: redis.url,
      JOB_ENCRYPTION_KEY: 'd'.repeat(64),
      ROLE: 'worker',
      SHUTDOWN_GRACE_MS: '0',
    });
    await worker.start();
    // Prometheus scrapes it (every 30 s in the chart); this is the scrape before the run.
    const before = await scrape();
    expect(value(before, failed)).toBe(0);
    const heldBefore = sim.control.counters().faultsInjected;
    sim.control.injectFault({ method: 'GET', pathTemplate: '/v3/accounts', nth: 2, hold: true });
    const running = aggregate();
    running.catch(() => undefined);
    await until('the run is held', () => sim.control.counters().faultsInjected > heldBefore, WAIT_MS);
    worker.signal('SIGTERM');
    await expect(running).rejects.toThrow(/shut down before it finished/);
    sim.control.releaseHeld();
    // The worker stays to be scraped once more (it used to exit within 0.1-0.2 s, its last counters unread).
    const waiting = until(
      'the worker waits for its final scrape',
      () => worker.logs.join('').includes('waiting for a final metrics scrape'),
      WAIT_MS,
    ).then(() => 'waiting' as const);
    expect(await Promise.race([waiting, worker.exited.then(() => 'exited' as const)])).toBe('waiting');
    const last = await scrape();
    expect(value(last, failed)).toBe(1);
    expect(value(last, cancelled)).toBe(0);
    expect(value(last, shutdownErrors)).toBe(1);
    expect(await worker.exited).toBe(0);
    expect(worker.logs.join('')).toContain('"finalScrape":"scraped"');
  });
});
