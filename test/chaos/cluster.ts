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
  /** Added to every server's environment (a test that forces a start to fail). */
  env?: Record<string, string>;
}

export class Cluster {
  readonly apis: Proc[] = [];
  readonly workers: Proc[] = [];
  redis!: OwnRedis;
  sim!: RunningSimulator;
  control!: Redis;

  private constructor() {}

  /**
   * Starts everything or nothing: when any part fails to start, what did start is stopped before
   * start() rejects (the caller has no handle to stop it with).
   */
  static async start(opts: ClusterOptions = {}): Promise<Cluster> {
    const c = new Cluster();
    try {
      await c.startParts(opts);
      return c;
    } catch (e) {
      await c.stop();
      throw e;
    }
  }

  private async startParts(opts: ClusterOptions): Promise<void> {
    this.redis = await startOwnRedis();
    this.sim = await startSimulator({
      seed: 17,
      tenant: {
        identities: opts.identities ?? 300,
        accountsPerSource: opts.accountsPerSource ?? 250,
        machineRate: 0.02,
      },
      rateLimit: false,
      logRequests: false,
    });
    this.control = new Redis(this.redis.url, { maxRetriesPerRequest: 1 });
    this.control.on('error', () => undefined);
    // Every setting at its default: the figures are what a deployment sees. Debug logs give the
    // secrets scan the most output to search.
    const common = { REDIS_URL: this.redis.url, JOB_ENCRYPTION_KEY: JOB_KEY, LOG_LEVEL: 'debug', ...opts.env };
    for (const i of [1, 2])
      this.apis.push(new Proc(`api-${i}`, 'api', await freePort(), { ...common, ROLE: 'api', PROXY_PASSWORD }));
    for (const i of [1, 2])
      this.workers.push(new Proc(`worker-${i}`, 'worker', await freePort(), { ...common, ROLE: 'worker' }));
    // allSettled: every start has ended (and spawned what it will) before a failure stops them all.
    const started = await Promise.allSettled([...this.apis, ...this.workers].map((p) => p.start()));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
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
    // Each part may be missing: stop() also cleans up after a start that failed half-way.
    (this.control as Redis | undefined)?.disconnect();
    await (this.sim as RunningSimulator | undefined)?.close();
    await (this.redis as OwnRedis | undefined)?.stop();
  }
}
