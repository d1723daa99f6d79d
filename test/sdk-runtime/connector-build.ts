import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// buildSync: no esbuild service process lives on in the jest worker (the run checks none is left).
import { buildSync } from 'esbuild';

const ROOT = resolve(__dirname, '..', '..');
export const NODE_MODULES = join(ROOT, 'node_modules');

/**
 * The connector compiled for the SDK's dev server (`spcx`): dependencies stay external and resolve
 * from this project's node_modules (NODE_PATH), so spcx and the connector share one SDK instance and
 * spcx's `_withConfig` reaches the connector's `readConfig()`, as with a developer's own build.
 */
export async function buildForSpcx(): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'fusion-spcx-')), 'index.js');
  buildSync({
    entryPoints: [join(ROOT, 'src/connector/index.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    outfile: out,
    logLevel: 'error',
  });
  return out;
}

/**
 * `npm run pack-zip` into a fresh directory, then the zip extracted into an empty one (Python's zipfile: a reader that
 * is not ours).
 */
export function packAndExtract(): { zipFile: string; dir: string; files: string[] } {
  const outDir = mkdtempSync(join(tmpdir(), 'fusion-zip-'));
  const packed = spawnSync(process.execPath, [join(ROOT, 'tools/pack-zip.mjs'), outDir], { encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`pack-zip failed: ${packed.stderr}${packed.stdout}`);
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  const zipFile = join(outDir, `${pkg.name}-${pkg.version}.zip`);
  const dir = mkdtempSync(join(tmpdir(), 'fusion-unzipped-'));
  const py = spawnSync(
    'python3',
    [
      '-c',
      'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint("\\n".join(z.namelist()))\nz.extractall(sys.argv[2])',
      zipFile,
      dir,
    ],
    { encoding: 'utf8' },
  );
  if (py.error || py.status !== 0)
    throw new Error(`extracting ${zipFile} with python3 failed (install python3): ${py.error?.message ?? py.stderr}`);
  return { zipFile, dir, files: py.stdout.trim().split('\n').sort() };
}

export interface ExecCommand {
  type: string;
  input: unknown;
  config: Record<string, unknown>;
}

export interface ExecResult {
  outputs: Array<Record<string, unknown>>;
  keepAlives: number;
  count: number;
  heap: number[];
  error?: { type: string; message: string; name: string };
}

/** Environment of a child that runs the connector: LOG_LEVEL as given (undefined = unset, the platform's default). */
export function childEnv(logLevel: string | undefined, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.LOG_LEVEL;
  delete env.PROXY_PASSWORD;
  delete env.CONNECTOR_CONFIG;
  if (logLevel !== undefined) env.LOG_LEVEL = logLevel;
  return env;
}

/**
 * Runs commands through the connector module's own SDK `_exec` in a child process (test/sdk-runtime/exec-driver.js).
 */
export function execInChild(
  module: string,
  commands: ExecCommand[],
  opts: {
    logLevel?: string;
    cwd?: string;
    nodeArgs?: string[];
    heapEvery?: number;
    slowWritable?: boolean;
    env?: Record<string, string>;
  } = {},
): Promise<{ results: ExecResult[]; log: string }> {
  const resultFile = join(mkdtempSync(join(tmpdir(), 'fusion-exec-')), 'result.json');
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), join(__dirname, 'exec-driver.js')], {
      cwd: opts.cwd ?? tmpdir(),
      env: childEnv(opts.logLevel, opts.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 || !existsSync(resultFile))
        return reject(new Error(`exec driver exited ${code}: ${out.slice(-3000)} ${err.slice(-2000)}`));
      try {
        resolvePromise({ results: JSON.parse(readFileSync(resultFile, 'utf8')) as ExecResult[], log: out + err });
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
    child.stdin.end(
      JSON.stringify({ module, resultFile, commands, heapEvery: opts.heapEvery, slowWritable: opts.slowWritable }),
    );
  });
}
