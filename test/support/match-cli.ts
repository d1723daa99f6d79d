/**
 * What the `fusion-proxy match` tests share (test/matching, test/cli): input files in a temporary
 * folder, the command run in process, and its HTML report as headless Chromium renders it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runMatch } from '../../src/cli/match';

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

/** The page after its scripts ran, as Chromium serialises it. */
export async function renderedDom(page: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    '/usr/bin/chromium',
    ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--dump-dom', `file://${page}`],
    { maxBuffer: 32 * 1024 * 1024, timeout: 120_000 },
  );
  return stdout;
}
