/**
 * A real `fusion-proxy serve` process built from this checkout (src/cli/main.ts bundled by esbuild,
 * dependencies from node_modules), for tests that need separate api and worker processes: kills,
 * SIGTERM drains, memory, a real Prometheus scraping them. Its output is kept for searching.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
// buildSync: no esbuild service process lives on in the jest worker (the run checks none is left).
import { buildSync } from 'esbuild';
import { scaled } from './time-factor';

const ROOT = resolve(__dirname, '..', '..');

let built: Promise<string> | undefined;

/**
 * `entry` bundled by esbuild (dependencies from node_modules) into .chaos-out/`name`.cjs, for node to
 * run as a process of its own. Jest workers build in parallel: each writes its own file, then renames
 * it over the shared one (atomic, and every build is the same), so none reads a half-written file.
 */
export function bundle(entry: string, name: string): string {
  const dir = join(ROOT, '.chaos-out');
  mkdirSync(dir, { recursive: true });
  const own = join(dir, `${name}-${process.pid}.cjs`);
  const out = join(dir, `${name}.cjs`);
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    outfile: own,
    logLevel: 'error',
  });
  renameSync(own, out);
  return out;
}

/** The CLI bundled once per jest worker. */
function buildCli(): Promise<string> {
  built ??= Promise.resolve().then(() => bundle(join(ROOT, 'src/cli/main.ts'), 'main'));
  return built;
}

/** Runs `fusion-proxy <args>` to its end, as a pod's container would. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = await buildCli();
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { code, stdout, stderr };
}

export type Role = 'api' | 'worker' | 'all';

export class Proc {
  child?: ChildProcess;
  readonly logs: string[] = [];
  exited!: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly role: Role,
    readonly port: number,
    private readonly env: Record<string, string>,
    /** How long start() waits for /readyz before it kills the process and rejects (scaled by TEST_TIME_FACTOR). */
    private readonly readyWithinMs = 30_000,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Started and not exited (false before start()). */
  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Spawns `serve` and waits for /readyz; on any failure the process is killed before start() rejects. */
  async start(): Promise<void> {
    const cli = await buildCli();
    const child = spawn(process.execPath, [cli, 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...this.env, PORT: String(this.port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (d: Buffer): void => void this.logs.push(d.toString('utf8'));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.exited = new Promise((r) => child.once('exit', (code) => r(code)));
    try {
      await this.ready();
    } catch (e) {
      await this.kill('SIGKILL');
      throw e;
    }
  }

  private async ready(): Promise<void> {
    const limit = scaled(this.readyWithinMs);
    const end = Date.now() + limit;
    for (;;) {
      if (!this.alive) throw new Error(`${this.name} exited at start: ${this.logs.join('').slice(-2000)}`);
      try {
        const res = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(limit) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > end)
        throw new Error(`${this.name} not ready within ${limit / 1000} s: ${this.logs.join('').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Sends a signal without waiting for the exit (await `exited` for that). */
  signal(signal: NodeJS.Signals): void {
    if (!this.child) throw new Error(`${this.name} was never started`);
    this.child.kill(signal);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.child || !this.alive) return;
    this.child.kill(signal);
    await this.exited;
  }

  /** The process's log lines as parsed JSON (pino), non-JSON lines skipped. */
  logLines(): Array<Record<string, unknown>> {
    return this.logs
      .join('')
      .split('\n')
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
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
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child?.pid}/status`, 'utf8'));
      return m ? Math.round(Number(m[1]) / 1024) : 0;
    } catch {
      return 0;
    }
  }
}
