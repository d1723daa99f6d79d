// Prints the slowest test files of the last jest run (written by test/support/timing-reporter.js).
// Usage: node tools/slowest-tests.mjs [file] [count]
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? process.env.TEST_TIMES_FILE ?? '.test-times.json';
const count = Number(process.argv[3] ?? 10);
const { writtenAt, files } = JSON.parse(readFileSync(file, 'utf8'));
const total = files.reduce((t, f) => t + f.seconds, 0);
console.log(
  `slowest ${count} of ${files.length} test files (run of ${writtenAt}; ${Math.round(total)} s summed over workers):`,
);
for (const f of files.slice(0, count)) {
  console.log(
    `${f.seconds.toFixed(1).padStart(7)} s  ${String(f.tests).padStart(3)} tests  ${f.file}${f.failed ? '  (failed)' : ''}`,
  );
}
