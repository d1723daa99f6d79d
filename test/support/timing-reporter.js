/**
 * A jest reporter that writes each test file's wall time (start to end, in its worker) and the CPU
 * it cost (its worker's and its processes', from file-cpu.ts) to TEST_TIMES_FILE (default
 * .test-times.json), slowest first; `node tools/slowest-tests.mjs` prints the slowest by each. CI
 * prints them after the run, so the file to fix next has a name.
 */
const { readFileSync, readdirSync, writeFileSync } = require('node:fs');
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

  /** The CPU lines the workers wrote to the run's folder (global-setup made it; teardown removes it after us). */
  readCpu() {
    // The name test-run.ts owns (RUN_DIR); this file cannot import its TypeScript.
    const dir = process.env.FUSION_TEST_RUN_DIR;
    const cpu = new Map();
    if (!dir) return cpu;
    for (const name of readdirSync(dir).filter((n) => /^cpu-\d+\.jsonl$/.test(n))) {
      for (const line of readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean)) {
        const { file, cpu: own, childCpu } = JSON.parse(line);
        cpu.set(path.relative(this.rootDir, file), {
          cpu: Math.round(own * 10) / 10,
          childCpu: Math.round(childCpu * 10) / 10,
        });
      }
    }
    return cpu;
  }

  onRunComplete() {
    const cpu = this.readCpu();
    for (const f of this.files) Object.assign(f, cpu.get(f.file));
    const out = process.env.TEST_TIMES_FILE || path.join(this.rootDir, '.test-times.json');
    this.files.sort((a, b) => b.seconds - a.seconds);
    writeFileSync(out, JSON.stringify({ writtenAt: new Date().toISOString(), files: this.files }, null, 2) + '\n');
  }
}

module.exports = TimingReporter;
