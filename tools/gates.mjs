// npm run test:gates: the checks `npm run lint` and `npm run typecheck` run one after the other
// (ESLint, Prettier, dependency-cruiser, knip, the type check), here two at a time: each is one
// process on one core, so on a 2-core machine the gates take about the time of the two longest
// (ESLint and tsc) instead of the sum of all five. Each check runs in full, as in those scripts;
// its output is printed whole when it ends, with its time. Exits non-zero when any check fails.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

// The checks are package.json's `lint` (commands joined by &&) and `typecheck`: one list, kept there.
const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// Longest first (measured on a 2-core machine), so the short ones fill in beside them.
const LONGEST = ['eslint', 'tsc'];
const CHECKS = [...scripts.lint.split('&&'), scripts.typecheck]
  .map((command) => command.trim().split(/\s+/))
  .map(([name, ...args]) => [name, [bin(name), ...args]])
  .sort(([a], [b]) => rank(a) - rank(b));

function rank(name) {
  const i = LONGEST.indexOf(name);
  return i < 0 ? LONGEST.length : i;
}

const parallel = Math.max(1, Math.min(2, availableParallelism()));

function run([name, [command, ...args]]) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const done = (code, error) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(
        `\n== ${name}: ${code === 0 ? 'ok' : `FAILED (${error ?? `exit ${code}`})`}, ${seconds} s\n`,
      );
      if (output) process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      resolve({ name, ok: code === 0, seconds });
    };
    child.on('error', (e) => done(-1, e.message));
    child.on('close', (code, signal) => done(code ?? -1, signal ? `signal ${signal}` : undefined));
  });
}

const started = Date.now();
const queue = [...CHECKS];
const results = [];
await Promise.all(
  Array.from({ length: parallel }, async () => {
    for (let check = queue.shift(); check; check = queue.shift()) results.push(await run(check));
  }),
);
const failed = results.filter((r) => !r.ok).map((r) => r.name);
const total = ((Date.now() - started) / 1000).toFixed(1);
console.log(
  `\ngates: ${results.map((r) => `${r.name} ${r.seconds} s`).join(', ')}; ${total} s in all, ${parallel} at a time` +
    (failed.length ? `; FAILED: ${failed.join(', ')}` : ''),
);
process.exit(failed.length ? 1 : 0);
