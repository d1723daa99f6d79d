/**
 * #10 item 4: a client that leaves, at any point, releases everything its command held: the
 * worker slot, the run lock and the processing flag of an aggregation, the job's Redis stream and
 * the api's reader connection. Here with the production runner against the simulator over HTTP,
 * in both modes; the point "while the api waits on a paused client" is client-leaves.test.ts.
 */
import http from 'node:http';
import { Redis } from 'ioredis';
import { createLogger } from '../../src/observability/logger';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import type { EmbeddedDispatcher } from '../../src/dispatch/embedded-dispatcher';
import { loadEnv } from '../../src/server/env';
import { startServer, type RunningServer } from '../../src/server/server';
import type { QueueDispatcher } from '../../src/queue/queue-dispatcher';
import { redisUrl, uniquePrefix } from '../support/redis';
import {
  HARNESS_JOB_KEY,
  PASSWORD,
  commandBody,
  ndjsonItems,
  post,
  startHarness,
  type Harness,
  type Mode,
} from './harness';
import { scaled } from '../support/time-factor';
import { until } from '../support/until';

/** How long a release may take (quiet machine; until() scales it). */
const RELEASE_MS = 30_000;

jest.setTimeout(scaled(90_000));

describe.each<Mode>(['embedded', 'queue'])('a client that leaves releases what its command held (%s mode)', (mode) => {
  let sim: RunningSimulator;
  let server: RunningServer;
  let runtimeRedis: Redis | undefined;
  let control: Redis | undefined;
  let queueName: string;

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 5,
      tenant: { identities: 40, accountsPerSource: 30, machineRate: 0 },
      rateLimit: false,
      logRequests: false,
    });
    queueName = uniquePrefix('q');
    if (mode === 'queue') {
      runtimeRedis = new Redis(redisUrl(), { maxRetriesPerRequest: 3 });
      control = new Redis(redisUrl());
    }
    const env = loadEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      PROXY_PASSWORD: PASSWORD,
      PROXY_PATH: '/proxy',
      QUEUE_NAME: queueName,
      ...(mode === 'queue' ? { REDIS_URL: redisUrl(), JOB_ENCRYPTION_KEY: HARNESS_JOB_KEY } : {}),
    });
    const runner = createProductionRunner({
      ...(runtimeRedis ? { redis: runtimeRedis } : {}),
      keyPrefix: `${queueName}:`,
      taskPollMs: 100,
    });
    server = await startServer(env, {
      runner,
      logger: createLogger({ level: 'error', destination: { write: () => undefined } }),
    });
  });

  afterAll(async () => {
    await server?.close();
    await sim?.close();
    runtimeRedis?.disconnect();
    await control?.quit();
  });

  const fusionId = (): string => sim.tenant.meta.fusionSourceId!;
  const flag = (): unknown => sim.tenant.source(fusionId()).connectorAttributes.processing ?? null;
  const body = () => ({
    type: 'std:account:list',
    input: {},
    config: {
      proxyEnabled: true,
      proxyPassword: PASSWORD,
      baseurl: sim.baseurl,
      clientId: sim.clientId,
      clientSecret: sim.clientSecret,
      spConnectorInstanceId: sim.tenant.source(fusionId()).connectorAttributes.spConnectorInstanceId,
      sources: ['Contractors', 'LDAP', 'Legacy'],
      requestsPerSecond: 1000,
      matching: {
        attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }],
      },
    },
  });

  async function everythingReleased(): Promise<void> {
    await until('processing flag', () => flag() === null, RELEASE_MS);
    if (mode === 'embedded') {
      await until('worker slot', () => (server.dispatcher as EmbeddedDispatcher).running === 0, RELEASE_MS);
    } else {
      await until('worker slot', () => server.worker!.activeJobs === 0, RELEASE_MS);
      await until(
        'result stream',
        async () => (await control!.keys(`fusion:${queueName}:*:out`)).length === 0,
        RELEASE_MS,
      );
      await until('reader connection', () => (server.dispatcher as QueueDispatcher).readersInUse === 0, RELEASE_MS);
    }
  }

  it('before the first byte: an aggregation whose client leaves frees its lock and flag, slot, stream and reader; the next run succeeds', async () => {
    // Slow pages: the run has set its flag and holds its lock, and has written nothing yet.
    sim.control.injectFault({ pathTemplate: '/v3/accounts', latencyMs: 300, times: Infinity });
    let gotResponse = false;
    const payload = JSON.stringify(body());
    const req = http.request(
      `${server.url}/proxy`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      () => (gotResponse = true),
    );
    req.on('error', () => undefined);
    req.end(payload);
    await until('flag set by the run', () => flag() !== null, RELEASE_MS);
    req.destroy();
    await everythingReleased();
    sim.control.clearFaults();
    expect(gotResponse).toBe(false);
    // The run lock is free: the next aggregation runs instead of AGGREGATION_IN_PROGRESS.
    const next = await post(`${server.url}/proxy`, body());
    expect(next.status).toBe(200);
    expect(next.complete).toBe(true);
    expect(ndjsonItems(next.body).length).toBeGreaterThan(0);
    await everythingReleased();
  });

  it('an aggregation sent the moment the previous client left runs (it waits for the stopping run, no AGGREGATION_IN_PROGRESS)', async () => {
    sim.control.injectFault({ pathTemplate: '/v3/accounts', latencyMs: 300, times: Infinity });
    const payload = JSON.stringify(body());
    const req = http.request(`${server.url}/proxy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    req.on('error', () => undefined);
    req.end(payload);
    await until('flag set by the run', () => flag() !== null, RELEASE_MS);
    req.destroy();
    sim.control.clearFaults();
    // What the platform does after a cancel: the next aggregation at once, lock and flag still held.
    const next = await post(`${server.url}/proxy`, body());
    expect(next.body).not.toContain('AGGREGATION_IN_PROGRESS');
    expect(next.status).toBe(200);
    expect(next.complete).toBe(true);
    expect(ndjsonItems(next.body).length).toBeGreaterThan(0);
    await everythingReleased();
  });
});

describe.each<Mode>(['embedded', 'queue'])('a client that leaves mid-stream (%s mode)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h.close();
  });

  it('cancels the command and frees its slot, its Redis stream and the reader connection', async () => {
    const before = h.runner.count;
    const res = await post(`${h.base}/proxy`, commandBody({ items: 5, gateAfterItems: 2, gate: 'never' }), {
      onChunk: (s, req) => {
        if (s.includes('"i":1')) req.destroy();
      },
    });
    expect(res.complete).toBe(false);
    expect(ndjsonItems(res.body).length).toBeGreaterThan(0);
    await h.runner.waitFor((e) => e[before]?.cancelled === true);
    expect(h.runner.executions[before]!.finished).toBe(false);
    if (mode === 'embedded') {
      await until('worker slot', () => (h.server.dispatcher as EmbeddedDispatcher).running === 0, RELEASE_MS);
    } else {
      await until('worker slot', () => h.server.worker!.activeJobs === 0, RELEASE_MS);
      await until(
        'result stream',
        async () => (await h.redis!.keys(`fusion:${h.env.QUEUE_NAME}:*:out`)).length === 0,
        RELEASE_MS,
      );
      await until('reader connection', () => (h.server.dispatcher as QueueDispatcher).readersInUse === 0, RELEASE_MS);
    }
  });
});
