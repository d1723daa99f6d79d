import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm start` and `npm run demo` run tools/build-if-stale.mjs first: tsc runs only when an input
 * is newer than the last build. Tried on a scratch project whose tsc is a stub that records its runs.
 */
describe('build-if-stale (npm start, npm run demo)', () => {
  let dir: string;
  const runs = (): number => readFileSync(join(dir, 'tsc-runs.log'), 'utf8').split('\n').filter(Boolean).length;
  const buildIfStale = (): void => {
    execFileSync(process.execPath, [join(dir, 'tools', 'build-if-stale.mjs')], { cwd: dir, stdio: 'pipe' });
  };
  const age = (path: string, secondsAgo: number): void => {
    const t = Date.now() / 1000 - secondsAgo;
    utimesSync(path, t, t);
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fusion-build-'));
    for (const d of ['tools', 'src/cli', 'dist/cli', 'node_modules/typescript/bin'])
      mkdirSync(join(dir, d), { recursive: true });
    copyFileSync(join(__dirname, '..', '..', 'tools', 'build-if-stale.mjs'), join(dir, 'tools', 'build-if-stale.mjs'));
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'])
      writeFileSync(join(dir, f), '{}');
    writeFileSync(join(dir, 'src', 'cli', 'main.ts'), 'export {};\n');
    writeFileSync(join(dir, 'tsc-runs.log'), '');
    // The stub "compiles": it writes the entry point and records that it ran.
    writeFileSync(
      join(dir, 'node_modules', 'typescript', 'bin', 'tsc'),
      `require('fs').writeFileSync(${JSON.stringify(join(dir, 'dist', 'cli', 'main.js'))}, '');
require('fs').appendFileSync(${JSON.stringify(join(dir, 'tsc-runs.log'))}, process.argv.slice(2).join(' ') + '\\n');`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('builds when there is no build, then not again while nothing changed', () => {
    for (const p of [
      'src',
      'src/cli',
      'src/cli/main.ts',
      'tsconfig.json',
      'tsconfig.build.json',
      'package.json',
      'package-lock.json',
    ])
      age(join(dir, p), 60);
    buildIfStale();
    expect(runs()).toBe(1);
    expect(readFileSync(join(dir, 'tsc-runs.log'), 'utf8')).toBe('-p tsconfig.build.json\n');
    buildIfStale();
    buildIfStale();
    expect(runs()).toBe(1);
  });

  it('builds again after a source, a new file or the lockfile changed', () => {
    age(join(dir, 'dist', 'cli', 'main.js'), 30);
    appendFileSync(join(dir, 'src', 'cli', 'main.ts'), '// edited\n');
    buildIfStale();
    expect(runs()).toBe(2);
    age(join(dir, 'dist', 'cli', 'main.js'), 30);
    age(join(dir, 'src', 'cli', 'main.ts'), 60);
    age(join(dir, 'src', 'cli'), 60);
    writeFileSync(join(dir, 'src', 'new-file.ts'), 'export {};\n');
    buildIfStale();
    expect(runs()).toBe(3);
    age(join(dir, 'dist', 'cli', 'main.js'), 30);
    for (const p of ['src', 'src/new-file.ts']) age(join(dir, p), 60);
    writeFileSync(join(dir, 'package-lock.json'), '{"lockfileVersion":3}');
    buildIfStale();
    expect(runs()).toBe(4);
    buildIfStale();
    expect(runs()).toBe(4);
  });
});
