/**
 * A jest reporter that writes each test file's wall time (start to end, in its worker) to
 * TEST_TIMES_FILE (default .test-times.json), slowest first; `node tools/slowest-tests.mjs`
 * prints the ten slowest. CI prints them after the run, so the file to fix next has a name.
 */
const { writeFileSync } = require('node:fs');
const path = require('node:path');

class TimingReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.files = [];
  }

  onTestResult(test, result) {
    const { start, end } = result.perfStats;
    this.files.push({
      file: path.relative(this.rootDir, test.path),
      seconds: Math.round((end - start) / 100) / 10,
      tests: result.numPassingTests + result.numFailingTests + result.numPendingTests + result.numTodoTests,
      failed: result.numFailingTests > 0 || result.testExecError !== undefined,
    });
  }

  onRunComplete() {
    const out = process.env.TEST_TIMES_FILE || path.join(this.rootDir, '.test-times.json');
    this.files.sort((a, b) => b.seconds - a.seconds);
    writeFileSync(out, JSON.stringify({ writtenAt: new Date().toISOString(), files: this.files }, null, 2) + '\n');
  }
}

module.exports = TimingReporter;
