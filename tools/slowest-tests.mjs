// Prints the slowest test files of the last jest run (written by test/support/timing-reporter.js):
// by wall time, then by CPU (the worker's own plus the processes the file started), where a loaded
// machine's cores go. Usage: node tools/slowest-tests.mjs [file] [count]
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? process.env.TEST_TIMES_FILE ?? '.test-times.json';
const count = Number(process.argv[3] ?? 10);
const { writtenAt, files } = JSON.parse(readFileSync(file, 'utf8'));
const sum = (pick) => Math.round(files.reduce((t, f) => t + (pick(f) ?? 0), 0));
const cpuOf = (f) => (f.cpu ?? 0) + (f.childCpu ?? 0);
const row = (f) =>
  `${f.seconds.toFixed(1).padStart(7)} s  ${(f.cpu === undefined ? '?' : f.cpu.toFixed(1)).padStart(6)} + ` +
  `${(f.childCpu === undefined ? '?' : f.childCpu.toFixed(1)).padStart(5)} s CPU  ${String(f.tests).padStart(3)} tests  ` +
  `${f.file}${f.failed ? '  (failed)' : ''}`;

console.log(
  `${files.length} test files (run of ${writtenAt}): ${sum((f) => f.seconds)} s summed over workers; CPU ` +
    `${sum((f) => f.cpu)} s in the workers + ${sum((f) => f.childCpu)} s in the processes they started`,
);
console.log(`slowest ${count} (wall, then CPU: worker + its processes):`);
for (const f of files.slice(0, count)) console.log(row(f));
console.log(`most CPU ${count}:`);
for (const f of [...files].sort((a, b) => cpuOf(b) - cpuOf(a)).slice(0, count)) console.log(row(f));
