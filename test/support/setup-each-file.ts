// jest setupFilesAfterEnv, before each test file: the default per-test limit (30 s on a quiet
// machine, scaled by TEST_TIME_FACTOR; a file may set its own with jest.setTimeout(scaled(...))), and
// the run's mark on every process this file starts (test-run.ts), and what CPU the file costs (file-cpu.ts).
import { recordFileCpu } from './file-cpu';
import { markChildren } from './test-run';
import { scaled } from './time-factor';

jest.setTimeout(scaled(30_000));
const testPath = expect.getState().testPath ?? '?';
markChildren(testPath);
recordFileCpu(testPath);
