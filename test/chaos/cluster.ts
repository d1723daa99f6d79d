/**
 * A queue-mode deployment on loopback for the fault suite: real `fusion-proxy serve` processes (two
 * api, two workers) built from this checkout, their own redis-server, and the simulator playing the
 * platform over HTTP. Every process's output is kept, so the suite can search it for secrets.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { Redis } from 'ioredis';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { freePort } from '../support/free-port';
import { startOwnRedis, type OwnRedis } from '../support/own-redis';

const ROOT = resolve(__dirname, '..', '..');
export const PROXY_PASSWORD = 'chaos-proxy-password-4d1f7c2e9b';
export const JOB_KEY = 'c'.repeat(64);

let built: Promise<string> | undefined;

/** `src/cli/main.ts` bundled once per run; dependencies resolve from this checkout's node_modules. */
function buildCli(): Promise<string> {
  built ??= (async () => {
    const dir = join(ROOT, '.chaos-out');
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'main.cjs');
    await build({
      entryPoints: [join(ROOT, 'src/cli/main.ts')],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      packages: 'external',
      outfile: out,
      logLevel: 'error',
    });
    return out;
  })();
  return built;
}

export type Role = 'api' | 'worker';

export class Proc {
  child!: ChildProcess;
  readonly logs: string[] = [];
  exited!: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly role: Role,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    const cli = await buildCli();
    this.child = spawn(process.execPath, [cli, 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...this.env, PORT: String(this.port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (d: Buffer): void => void this.logs.push(d.toString('utf8'));
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.exited = new Promise((r) => this.child.once('exit', (code) => r(code)));
    const end = Date.now() + 30_000;
    for (;;) {
      if (!this.alive) throw new Error(`${this.name} exited at start: ${this.logs.join('').slice(-2000)}`);
      try {
        const res = await fetch(`${this.url}/readyz`);
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > end) throw new Error(`${this.name} not ready within 30 s: ${this.logs.join('').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.alive) return;
    this.child.kill(signal);
    await this.exited;
  }

  /** V8 heap in use, in MB, from the process's own /metrics. */
  async heapMb(): Promise<number> {
    const text = await (await fetch(`${this.url}/metrics`)).text();
    const m = /^fusion_process_nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
    return m ? Math.round(Number(m[1]) / 1024 / 1024) : -1;
  }

  /** Resident memory in MB, from /proc (Linux). */
  rssMb(): number {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
      return m ? Math.round(Number(m[1]) / 1024) : 0;
    } catch {
      return 0;
    }
  }
}

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
    const fusion = this.sim.tenant.source(this.sim.tenant.meta.fusionSourceId!);
    return {
      baseurl: this.sim.baseurl,
      clientId: this.sim.clientId,
      clientSecret: this.sim.clientSecret,
      spConnectorInstanceId: fusion.connectorAttributes.spConnectorInstanceId,
      sources: ['Contractors', 'LDAP', 'Legacy'],
      requestsPerSecond: 500,
      maxConcurrentRequests: 10,
      attributeDefinitions: [
        {
          name: 'login',
          expression: '$firstName.substring(0,1)$lastName',
          type: 'unique',
          case: 'lower',
          normalize: true,
          spaces: true,
        },
      ],
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
