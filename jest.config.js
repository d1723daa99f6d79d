const { scaled } = require('./test/support/time-factor');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Marks every process a test starts; global-teardown fails the run when one is left.
  setupFilesAfterEnv: ['<rootDir>/test/support/mark-children.ts'],
  // Per-file wall times to .test-times.json; tools/slowest-tests.mjs prints the slowest.
  reporters: ['default', '<rootDir>/test/support/timing-reporter.js'],
  // Per-test limit; TEST_TIME_FACTOR scales it with every readiness wait (test/support/time-factor.js).
  testTimeout: scaled(30_000),
  maxWorkers: 2,
  // npm test passes --coverage: the thresholds sit a little under the figures measured on
  // 2026-11-25 (lines 96.9 %, branches 86.7 %, functions 96.8 %), so a change that drops tests fails.
  collectCoverageFrom: ['src/**/*.ts'],
  coverageProvider: 'v8',
  coverageReporters: ['text-summary', 'json-summary'],
  coverageThreshold: { global: { lines: 95, statements: 95, branches: 84, functions: 95 } },
};
