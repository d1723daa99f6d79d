#!/usr/bin/env node
// `npm start` and `npm run demo` build first; a full `tsc` takes 25-30 s, so it runs only when a
// source, a tsconfig or the lockfile is newer than the last build (git checkouts touch what they
// change). `npm run build` still always builds.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// tsc writes every output on each build, so the entry point's time is the build's time.
const entry = path.join(root, 'dist', 'cli', 'main.js');
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];

function newest(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs; // a deleted or renamed file changes its directory
  for (const e of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, e)));
  return max;
}

const built = fs.existsSync(entry) ? fs.statSync(entry).mtimeMs : 0;
const changed = Math.max(...inputs.map((i) => newest(path.join(root, i))));
if (built > changed) process.exit(0);

process.stderr.write('building (sources changed since the last build)...\n');
const started = Date.now();
const tsc = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
process.stderr.write(`built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
