/**
 * What the `fusion-proxy match` tests share (test/matching, test/cli): input files in a temporary
 * folder, the command run in process, and its HTML report as headless Chromium renders it.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runMatch } from '../../src/cli/match';
import { scaled } from './time-factor';

/** A temporary folder for the calling test file, removed after its tests; `file` writes one file in it. */
export function matchInputs(prefix: string): { dir: string; file: (name: string, content: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    file: (name, content) => {
      const p = join(dir, name);
      writeFileSync(p, content);
      return p;
    },
  };
}

/** `fusion-proxy match <argv>` in process: its exit code and what it wrote to stdout and stderr. */
export async function matchCli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runMatch(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

const CHROMIUM = '/usr/bin/chromium';

/**
 * The headless Chromium the report tests render with, or an error that says what is missing and how
 * to get it (a bare `spawn /usr/bin/chromium EACCES` tells nobody what to install).
 */
export function chromiumBinary(path = CHROMIUM): string {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'is not installed' : 'cannot be run';
    throw new Error(
      `headless Chromium ${why} at ${path}: the match report tests render the HTML report in it. ` +
        `Debian/Ubuntu: apt-get install -y chromium (.ci/run installs it with the other test packages).`,
    );
  }
}

/** The page after its scripts ran, as Chromium serialises it. */
export async function renderedDom(page: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    chromiumBinary(),
    ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--dump-dom', `file://${page}`],
    { maxBuffer: 32 * 1024 * 1024, timeout: scaled(120_000) },
  );
  return stdout;
}
