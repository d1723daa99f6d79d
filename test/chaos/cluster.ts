/**
 * A queue-mode deployment on loopback for the fault suite: real `fusion-proxy serve` processes (two
 * api, two workers) built from this checkout, their own redis-server, and the simulator playing the
 * platform over HTTP. Every process's output is kept, so the suite can search it for secrets.
 */
import { Redis } from 'ioredis';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';
import { Proc } from '../support/serve-process';
import { LOGIN_DEFINITION, tenantConnection } from '../support/tenant-config';

export const PROXY_PASSWORD = 'chaos-proxy-password-4d1f7c2e9b';
export const JOB_KEY = 'c'.repeat(64);

export interface ClusterOptions {
  identities?: number;
  accountsPerSource?: number;
}

export class Cluster {
  readonly apis: Proc[] = [];
  readonly workers: Proc[] = [];
  redis!: OwnRedis;
  sim!: RunningSimulator;
  control!: Redis;

  static async start(opts: ClusterOptions = {}): Promise<Cluster> {
    const c = new Cluster();
    c.redis = await startOwnRedis();
    c.sim = await startSimulator({
      seed: 17,
      tenant: {
        identities: opts.identities ?? 300,
        accountsPerSource: opts.accountsPerSource ?? 250,
        machineRate: 0.02,
      },
      rateLimit: false,
      logRequests: false,
    });
    c.control = new Redis(c.redis.url, { maxRetriesPerRequest: 1 });
    c.control.on('error', () => undefined);
    // Every setting at its default: the figures are what a deployment sees. Debug logs give the
    // secrets scan the most output to search.
    const common = { REDIS_URL: c.redis.url, JOB_ENCRYPTION_KEY: JOB_KEY, LOG_LEVEL: 'debug' };
    for (const i of [1, 2])
      c.apis.push(new Proc(`api-${i}`, 'api', await freePort(), { ...common, ROLE: 'api', PROXY_PASSWORD }));
    for (const i of [1, 2])
      c.workers.push(new Proc(`worker-${i}`, 'worker', await freePort(), { ...common, ROLE: 'worker' }));
    await Promise.all([...c.apis, ...c.workers].map((p) => p.start()));
    return c;
  }

  get procs(): Proc[] {
    return [...this.apis, ...this.workers];
  }

  /** The connector configuration of the simulator's tenant. */
  config(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      ...tenantConnection(this.sim),
      requestsPerSecond: 500,
      maxConcurrentRequests: 10,
      attributeDefinitions: [LOGIN_DEFINITION],
      matching: {
        attributes: [{ attribute: 'displayName', algorithm: 'jaro-winkler', threshold: 92, mandatory: true }],
      },
      ...extra,
    };
  }

  processingFlag(): unknown {
    return this.sim.tenant.source(this.sim.tenant.meta.fusionSourceId!).connectorAttributes.processing ?? null;
  }

  async runLocks(): Promise<number> {
    try {
      return (await this.control.keys('fusion:run-lock:*')).length;
    } catch {
      return -1;
    }
  }

  async redisMemoryMb(): Promise<number> {
    try {
      const info = await this.control.info('memory');
      const m = /used_memory:(\d+)/.exec(info);
      return m ? Math.round((Number(m[1]) / 1024 / 1024) * 10) / 10 : 0;
    } catch {
      return -1;
    }
  }

  rssMb(): Record<string, number> {
    return Object.fromEntries(this.procs.map((p) => [p.name, p.rssMb()]));
  }

  allLogs(): string {
    return this.procs.map((p) => p.logs.join('')).join('');
  }

  async stop(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.kill('SIGKILL').catch(() => undefined)));
    this.control?.disconnect();
    await this.sim?.close();
    await this.redis?.stop();
  }
}
