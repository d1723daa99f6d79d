/**
 * A real `fusion-proxy serve` process built from this checkout (src/cli/main.ts bundled by esbuild,
 * dependencies from node_modules), for tests that need separate api and worker processes: kills,
 * SIGTERM drains, memory, a real Prometheus scraping them. Its output is kept for searching.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(__dirname, '..', '..');

let built: Promise<string> | undefined;

/**
 * The CLI bundled once per jest worker. Workers build in parallel: each writes its own file, then
 * renames it over main.cjs (atomic, and every build is the same), so none reads a half-written file.
 */
function buildCli(): Promise<string> {
  built ??= (async () => {
    const dir = join(ROOT, '.chaos-out');
    mkdirSync(dir, { recursive: true });
    const own = join(dir, `main-${process.pid}.cjs`);
    const out = join(dir, 'main.cjs');
    await build({
      entryPoints: [join(ROOT, 'src/cli/main.ts')],
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
  })();
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
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
      return m ? Math.round(Number(m[1]) / 1024) : 0;
    } catch {
      return 0;
    }
  }
}
