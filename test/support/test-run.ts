/**
 * What one jest run shares across its workers: a folder (global-setup makes it, global-teardown
 * removes it) for caches such as the chart's helm renders, and the mark that every process a test
 * starts carries, so the run can prove at its end that none is left (global-teardown.ts).
 *
 * The mark is an environment variable added to each child's environment at spawn (every spawn,
 * exec, execFile and fork goes through ChildProcess.prototype.spawn), whatever environment the test
 * gave it; grandchildren inherit it unless they clear their environment. Linux: the check reads /proc.
 */
import { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

// Also read by name in timing-reporter.js (plain JS that jest loads before any TS): rename both together.
const RUN_DIR = 'FUSION_TEST_RUN_DIR';
const CHILD_MARK = 'FUSION_TEST_CHILD';
const FILE_MARK = 'FUSION_TEST_FILE';
const ROOT = path.resolve(__dirname, '..', '..');

/** The run's folder; undefined outside a jest run (a test module loaded by something else). */
export function testRunDir(): string | undefined {
  return process.env[RUN_DIR] || undefined;
}

export function setTestRunDir(dir: string): void {
  process.env[RUN_DIR] = dir;
}

interface SpawnOptions {
  envPairs?: string[];
}
interface Marked {
  spawn(this: ChildProcess, options: SpawnOptions): unknown;
  fusionTestFile?: string;
  fusionMarked?: boolean;
}

/**
 * Marks the processes that this jest worker starts from now on with the run and the test file
 * (called per test file; the worker's child_process module is shared by the files it runs in turn).
 */
export function markChildren(testFile: string): void {
  const run = testRunDir();
  if (!run) return;
  const proto = ChildProcess.prototype as unknown as Marked;
  proto.fusionTestFile = path.relative(ROOT, testFile);
  if (proto.fusionMarked) return;
  proto.fusionMarked = true;
  const spawn = proto.spawn;
  proto.spawn = function (this: ChildProcess, options: SpawnOptions) {
    if (process.env.TEST_UNIT === '1')
      throw new Error(
        `${proto.fusionTestFile ?? 'a test'} starts a process: npm run test:unit runs in-process tests only; ` +
          'add the file to STARTS_PROCESSES in jest.config.js',
      );
    if (Array.isArray(options?.envPairs))
      options.envPairs.push(`${CHILD_MARK}=${run}`, `${FILE_MARK}=${proto.fusionTestFile ?? '?'}`);
    return spawn.call(this, options);
  };
}

export interface LeftProcess {
  pid: number;
  /** The test file that started it (or whose child started it). */
  file: string;
  command: string;
}

/** Live processes that carry this run's mark (of one test file when given); zombies have none. */
export function processesLeft(file?: string): LeftProcess[] {
  const run = testRunDir();
  if (!run) return [];
  const left: LeftProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let env: string[];
    try {
      env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (!env.includes(`${CHILD_MARK}=${run}`)) continue;
    const from = env.find((e) => e.startsWith(`${FILE_MARK}=`))?.slice(FILE_MARK.length + 1) ?? '?';
    if (file !== undefined && from !== path.relative(ROOT, file)) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue;
    }
    left.push({ pid: Number(name), file: from, command });
  }
  return left;
}
