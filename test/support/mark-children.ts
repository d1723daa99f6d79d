// jest setupFilesAfterEnv: every process this test file starts carries the run's mark (test-run.ts).
import { markChildren } from './test-run';

markChildren(expect.getState().testPath ?? '?');
