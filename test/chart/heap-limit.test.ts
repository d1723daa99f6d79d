import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './support/helm';

/**
 * bin/heap-limit.sh, the image's start (Dockerfile ENTRYPOINT): node gets NODE_HEAP_PERCENT (default
 * 75) of the container's memory limit as its heap, instead of the half Node takes by itself, and
 * nothing else changes. A fake cgroup directory (CGROUP_ROOT) stands in for the pod's.
 */
const SCRIPT = path.join(REPO_ROOT, 'bin/heap-limit.sh');
const GiB = 2 ** 30;
const MiB = 2 ** 20;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'heap-limit-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A cgroup root whose files say `files` (path relative to the root -> content). */
function cgroup(files: Record<string, string>): string {
  const root = path.join(dir, String(n++));
  for (const [f, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), `${content}\n`);
  }
  mkdirSync(root, { recursive: true });
  return root;
}

/** The script run with `args`; `env` on top of PATH only. */
function run(args: string[], env: Record<string, string>) {
  const r = spawnSync(SCRIPT, args, {
    env: { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`, ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

/** What node received and the heap V8 then has, in MiB. */
function nodeUnder(env: Record<string, string>, extra: string[] = []): { execArgv: string[]; heapMib: number } {
  const r = run(
    [
      'node',
      ...extra,
      '-e',
      'console.log(JSON.stringify({execArgv: process.execArgv.filter((a) => a.startsWith("--max")), heapMib: require("v8").getHeapStatistics().heap_size_limit / 2 ** 20}))',
    ],
    env,
  );
  expect(r).toMatchObject({ status: 0, stderr: '' });
  return JSON.parse(r.stdout) as { execArgv: string[]; heapMib: number };
}

describe('bin/heap-limit.sh', () => {
  it('is executable (the image runs it directly)', () => {
    expect(statSync(SCRIPT).mode & 0o111).toBe(0o111);
  });

  it('gives node 75 % of a cgroup v2 limit by default, and V8 takes it', () => {
    const root = cgroup({ 'memory.max': String(2 * GiB) });
    const got = nodeUnder({ CGROUP_ROOT: root });
    expect(got.execArgv).toEqual(['--max-old-space-size=1536']);
    // heap_size_limit is the old space plus the young generation.
    expect(got.heapMib).toBeGreaterThanOrEqual(1536);
    expect(got.heapMib).toBeLessThan(1536 + 128);
  });

  it('takes NODE_HEAP_PERCENT and reads a cgroup v1 limit', () => {
    const root = cgroup({ 'memory/memory.limit_in_bytes': String(4 * GiB) });
    expect(run(['echo', 'serve'], { CGROUP_ROOT: root, NODE_HEAP_PERCENT: '50' }).stdout).toBe(
      '--max-old-space-size=2048 serve',
    );
    expect(run(['echo'], { CGROUP_ROOT: root, NODE_HEAP_PERCENT: '95' }).stdout).toBe('--max-old-space-size=3891');
  });

  it('leaves the heap to Node without a limit, with a tiny one, or when told to', () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['no cgroup files', { CGROUP_ROOT: cgroup({}) }],
      ['cgroup v2 "max"', { CGROUP_ROOT: cgroup({ 'memory.max': 'max' }) }],
      // cgroup v1's "no limit": 2^63 - 1 rounded down to a page.
      ['cgroup v1 no limit', { CGROUP_ROOT: cgroup({ 'memory/memory.limit_in_bytes': '9223372036854771712' }) }],
      ['a limit under 256 MiB', { CGROUP_ROOT: cgroup({ 'memory.max': String(200 * MiB) }) }],
      ['NODE_HEAP_PERCENT=0', { CGROUP_ROOT: cgroup({ 'memory.max': String(2 * GiB) }), NODE_HEAP_PERCENT: '0' }],
    ];
    for (const [what, env] of cases) {
      expect({ what, out: run(['echo', 'serve'], env) }).toEqual({
        what,
        out: { status: 0, stdout: 'serve', stderr: '' },
      });
    }
  });

  it('keeps a heap size the operator gave, in NODE_OPTIONS or on the command line', () => {
    const root = cgroup({ 'memory.max': String(2 * GiB) });
    const viaOptions = nodeUnder({ CGROUP_ROOT: root, NODE_OPTIONS: '--max-old-space-size=900' });
    expect(viaOptions.execArgv).toEqual([]);
    expect(Math.floor(viaOptions.heapMib / 100)).toBe(9);
    const viaArgs = nodeUnder({ CGROUP_ROOT: root }, ['--max-old-space-size=700']);
    expect(viaArgs.execArgv).toEqual(['--max-old-space-size=700']);
    // V8 also takes the flag with underscores.
    const underscores = nodeUnder({ CGROUP_ROOT: root, NODE_OPTIONS: '--max_old_space_size=800' });
    expect(underscores.execArgv).toEqual([]);
    expect(Math.floor(underscores.heapMib / 100)).toBe(8);
  });

  it('refuses a NODE_HEAP_PERCENT out of range or not a number, and runs nothing', () => {
    const root = cgroup({ 'memory.max': String(2 * GiB) });
    for (const bad of ['5', '96', '75%', 'abc', '-1']) {
      const r = run(['echo', 'ran'], { CGROUP_ROOT: root, NODE_HEAP_PERCENT: bad });
      expect(r.status).toBe(64);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('NODE_HEAP_PERCENT must be a whole number from 10 to 95');
    }
  });

  it('execs node in its own place (tini forwards SIGTERM to that pid)', async () => {
    const root = cgroup({ 'memory.max': String(2 * GiB) });
    const child = spawn(SCRIPT, ['node', '-e', 'console.log(process.pid); setInterval(() => {}, 1000)'], {
      env: {
        PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`,
        CGROUP_ROOT: root,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pid = await new Promise<number>((resolve) =>
      child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
    );
    expect(pid).toBe(child.pid);
    const exit = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
    child.kill('SIGTERM');
    expect(await exit).toBe('SIGTERM');
  });
});
